#!/usr/bin/env bash
# Runs every check CI runs: formatting, a build with no warnings in our code, all tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
Tools/scripts/install-deps.sh

echo "== swift format lint --strict" >&2
swift format lint --strict --recursive Package.swift Modules Plugins Tools Tests

echo "== swift build --build-tests" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
here=$(pwd)
if grep -E "^(${here}/)?(Modules|Plugins|Tools|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" \
  | grep -v "/.build" >&2; then
  echo "error: the build has warnings in our code (above); fix them." >&2
  exit 1
fi

echo "== swift test" >&2
swift test --skip-build
