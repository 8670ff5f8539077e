#!/usr/bin/env bash
# Builds the DocC catalogs of all 19 library products (`targets` below), with
# swift-docc-plugin: each product's target has a `<Target>.docc` catalog in its folder, whose
# root page says what the module is for and lists its main symbols; Core's also has "Getting
# started" and "Writing a medium". Any DocC warning fails it: in a catalog, or in the doc
# comment of a public symbol (a broken ``link``, a parameter that does not exist). So does a
# library product of Package.swift missing from `targets` (but an old name kept as a re-export,
# `renamed` below: it has no symbols of its own to document).
#   Tools/scripts/docs.sh                 # into .build/docs/<Target>.doccarchive (DOCS_OUTPUT)
#   Tools/scripts/docs.sh --preview Core  # serve one catalog at http://localhost:8080, live
# test.sh runs it after the debug build, which it reuses (its symbol graphs come from it).
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(
  Strategy Tokens BeaconFrames Core Resolution PeerResolution MediumTestKit NearbyTesting
  ServerStorage
  ResolverClient
  NearbyServer DBus BLEBlueZ AudioModem AudioPulse PermissionStore BackgroundPersistence
  LANMulticast DesktopNotifications
)
# Old product names, kept for one minor version as re-exports of their new module.
renamed=(ServerResolver)

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
' "${targets[@]}" "${renamed[@]}")
if [[ -n $missing ]]; then
  echo "error: library products without their catalog in $0's targets: $missing" >&2
  exit 1
fi

out=${DOCS_OUTPUT:-.build/docs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/nearby-docs.XXXXXX")
trap 'rm -f "$log"' EXIT

# The symbol graphs of every module in one run (what swift-docc-plugin does per target, in a
# build of its own each: 3 min 12-34 s for the 17 on 2 cores, against about 40 s here), then one
# `docc convert` per catalog over its module's graphs (1-3 s each). --warnings-as-errors: a
# warning makes docc exit non-zero. Same symbol options as the plugin's: public symbols and
# extension blocks.
echo "== symbol graphs (swift package dump-symbol-graph)" >&2
if ! swift package dump-symbol-graph --emit-extension-block-symbols >"$log" 2>&1; then
  cat "$log" >&2
  echo "error: the symbol graphs could not be made (above)" >&2
  exit 1
fi
graphs=$(sed -n 's/^Files written to //p' "$log" | tail -1)
if [[ ! -d $graphs ]]; then
  cat "$log" >&2
  echo "error: dump-symbol-graph did not say where it wrote the graphs (above)" >&2
  exit 1
fi
rm -rf "${out:?}"/*.doccarchive
work=$(mktemp -d "${TMPDIR:-/tmp}/nearby-docs-graphs.XXXXXX")
trap 'rm -f "$log"; rm -rf "$work"' EXIT
failed=()
for target in "${targets[@]}"; do
  catalog=Modules/$target/$target.docc
  [[ -d $catalog ]] || catalog=Plugins/$target/$target.docc
  mkdir -p "$work/$target"
  cp "$graphs/$target.symbols.json" "$work/$target/"
  cp "$graphs/$target"@*.symbols.json "$work/$target/" 2>/dev/null || true
  echo "== docc convert $target" >&2
  if ! docc convert "$catalog" --additional-symbol-graph-dir "$work/$target" \
    --fallback-display-name "$target" --fallback-bundle-identifier "$target" \
    --output-path "$out/$target.doccarchive" --warnings-as-errors >"$log" 2>&1; then
    cat "$log" >&2
    failed+=("$target")
    continue
  fi
  # Belt and braces: a DocC diagnostic about our sources that still says "warning".
  if grep -E "^(/[^:]*/)?(Modules|Plugins)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" \
    | grep -v "/.build/" >&2; then
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "error: the documentation of ${failed[*]} has warnings or errors (above); fix them." >&2
  exit 1
fi
echo "documentation in $out/<Target>.doccarchive (${targets[*]})" >&2
