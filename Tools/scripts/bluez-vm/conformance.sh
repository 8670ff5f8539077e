#!/usr/bin/env bash
# MediumConformance for `.bluez()` against the real bluetoothd: boots the BlueZ VM and runs the
# BLEBlueZVM tests (Tests/BLEBlueZVM) there, from the test binary `swift build --build-tests`
# made (the VM sees /work read-only, so no `swift test` inside: it would need to write .build).
#   Tools/scripts/bluez-vm/conformance.sh [RESULTS]   (default /tmp/nearby-bluez-vm-conformance)
set -euo pipefail
cd "$(dirname "$0")/../../.."
results=${1:-/tmp/nearby-bluez-vm-conformance}
bin=$(swift build --show-bin-path)
tests="$bin/nearby-linuxPackageTests.xctest"
if [ ! -x "$tests" ]; then
  echo "error: $tests is missing: run 'swift build --build-tests' first" >&2
  exit 1
fi
exec Tools/scripts/bluez-vm/run.sh "$results" \
  "$tests" --testing-library swift-testing --no-parallel --filter 'BLEBlueZVM\.'
