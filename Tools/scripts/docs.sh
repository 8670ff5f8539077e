#!/usr/bin/env bash
# Builds the DocC catalogs of all 17 library products (`targets` below), with
# swift-docc-plugin: each product's target has a `<Target>.docc` catalog in its folder, whose
# root page says what the module is for and lists its main symbols; Core's also has "Getting
# started" and "Writing a medium". Any DocC warning fails it: in a catalog, or in the doc
# comment of a public symbol (a broken ``link``, a parameter that does not exist). So does a
# library product of Package.swift missing from `targets`.
#   Tools/scripts/docs.sh                 # into .build/docs/<Target>.doccarchive (DOCS_OUTPUT)
#   Tools/scripts/docs.sh --preview Core  # serve one catalog at http://localhost:8080, live
# test.sh runs it after the debug build, which it reuses (its symbol graphs come from it).
# Cost on 2 cores beside other builds (2026-11-27), after that build: 3 min 12-34 s for the 17
# (the 4 catalogs before: 35-64 s). Nearly all of it is the plugin extracting each target's
# symbol graph in a build of its own; each `docc convert` takes 1-3 s.
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(
  Strategy Tokens Core Resolution PeerResolution MediumTestKit ServerStorage ServerResolver
  NearbyServer DBus BLEBlueZ AudioModem AudioPulse PermissionStore BackgroundPersistence
  LANMulticast DesktopNotifications
)

if [[ ${1:-} == --preview ]]; then
  target=${2:?"usage: $0 --preview <$(IFS='|'; echo "${targets[*]}")>"}
  exec swift package --disable-sandbox preview-documentation --target "$target"
fi

# Every library product has its catalog, and has it built here: a new product is added above.
for target in "${targets[@]}"; do
  if [[ ! -d Modules/$target/$target.docc && ! -d Plugins/$target/$target.docc ]]; then
    echo "error: $target has no catalog (Modules/$target/$target.docc or Plugins/...)" >&2
    exit 1
  fi
done
missing=$(swift package dump-package | python3 -c '
import json, sys
products = json.load(sys.stdin)["products"]
libraries = sorted(p["name"] for p in products if "library" in p["type"])
print(*(name for name in libraries if name not in sys.argv[1:]))
' "${targets[@]}")
if [[ -n $missing ]]; then
  echo "error: library products without their catalog in $0's targets: $missing" >&2
  exit 1
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
