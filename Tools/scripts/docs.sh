#!/usr/bin/env bash
# Builds the DocC catalogs of the library products an app or plugin author uses, with
# swift-docc-plugin: Core (with "Getting started" and "Writing a medium"), PermissionStore,
# BackgroundPersistence and ServerResolver. Any DocC warning fails it: in a catalog, or in the
# doc comment of a public symbol (a broken ``link``, a parameter that does not exist).
#   Tools/scripts/docs.sh                 # into .build/docs/<Target>.doccarchive (DOCS_OUTPUT)
#   Tools/scripts/docs.sh --preview Core  # serve one catalog at http://localhost:8080, live
# test.sh runs it after the debug build, which it reuses (its symbol graphs come from it).
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(Core PermissionStore BackgroundPersistence ServerResolver)

if [[ ${1:-} == --preview ]]; then
  target=${2:?"usage: $0 --preview <$(IFS='|'; echo "${targets[*]}")>"}
  exec swift package --disable-sandbox preview-documentation --target "$target"
fi

out=${DOCS_OUTPUT:-.build/docs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/nearby-docs.XXXXXX")
trap 'rm -f "$log"' EXIT

target_options=()
for target in "${targets[@]}"; do target_options+=(--target "$target"); done
echo "== docc ${targets[*]} -> $out" >&2
rm -rf "${out:?}"/*.doccarchive
# One plugin run for every catalog (each run loads the package and its plugins again: four runs
# cost twice as long). --warnings-as-errors goes through to `docc convert`: a warning makes it
# exit non-zero.
if ! swift package --allow-writing-to-directory "$out" generate-documentation \
  "${target_options[@]}" --warnings-as-errors --output-path "$out" >"$log" 2>&1; then
  cat "$log" >&2
  echo "error: the documentation has warnings or errors (above); fix them." >&2
  exit 1
fi
# Belt and braces: a DocC diagnostic about our sources that still says "warning".
if grep -E "^(/[^:]*/)?(Modules|Plugins)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" \
  | grep -v "/.build/" >&2; then
  echo "error: the documentation has warnings (above); fix them." >&2
  exit 1
fi
echo "documentation in $out/<Target>.doccarchive (${targets[*]})" >&2
