#!/usr/bin/env bash
# Runs every check CI runs: formatting, a build with no warnings in our code, all tests, with the
# real services the tests need (Tools/scripts/services/) started here and stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
# What each stage cost (seconds), printed at the end, failed or not: what CI's time goes to.
stages=()
stage_name="install" stage_start=$SECONDS
stage() {
  stages+=("$stage_name $((SECONDS - stage_start))")
  stage_name=$1 stage_start=$SECONDS
}
print_stages() {
  stages+=("$stage_name $((SECONDS - stage_start))")
  echo "== stages (s): $(IFS=','; echo "${stages[*]}" | sed 's/,/, /g'); in all $SECONDS s" >&2
}
# The build and test sets (Tools/scripts/deps/): the services, the VM, Chromium, PostgreSQL...
Tools/scripts/install-deps.sh build test package

stage "lint"
echo "== swift format lint --strict" >&2
swift format lint --strict --recursive Package.swift Modules Plugins Tools Tests Examples

echo "== OpenAPI document" >&2
.venv/bin/openapi-spec-validator Modules/ResolverAPI/openapi.yaml
# The committed generated code (ResolverAPI/GeneratedSources) must be what openapi.yaml makes.
Tools/scripts/openapi-generate.sh --check

stage "build"
echo "== swift build --build-tests" >&2
NEARBY_TEST_RUNTIME=$(mktemp -d /tmp/nearby-test.XXXXXX)
export NEARBY_TEST_RUNTIME
exit_commands=()
on_exit() { exit_commands+=("$1"); }
run_exit_commands() {
  local i
  for ((i = ${#exit_commands[@]} - 1; i >= 0; i--)); do eval "${exit_commands[i]}" || true; done
  rm -rf "$NEARBY_TEST_RUNTIME"
  print_stages
}
trap run_exit_commands EXIT
# Killed or interrupted: exit through the EXIT trap, so the services and namespaces go too
# (bash runs no EXIT trap when a signal it does not trap ends it).
trap 'exit 143' TERM
trap 'exit 130' INT

log="$NEARBY_TEST_RUNTIME/build.log"
swift build --build-tests 2>&1 | tee "$log"
here=$(pwd)
# The generated API code included: openapi-generate.sh leaves it without warnings.
if grep -E "^(${here}/)?(Modules|Plugins|Tools|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" \
  | grep -vE -e "/.build" >&2; then
  echo "error: the build has warnings in our code (above); fix them." >&2
  exit 1
fi

# The DocC catalogs of the 19 library products (ServerResolver, an old name, has none); a warning fails. About 70 s on 2 cores (the
# symbol graphs of every module in one run, then docc convert per catalog).
stage "docs"
Tools/scripts/docs.sh

# The web page's modem: Modules/AudioModem compiled to WebAssembly with Embedded
# Swift; AudioModemTests run it with the toolchain's wasmkit against the native build. The
# page the server embeds (Modules/NearbyServer/Web/WebClientFiles.swift, committed) must be
# what Tools/web-client and that module make. About 15 s on 2 cores.
stage "web-modem"
Tools/scripts/build-web-client.sh --check "$NEARBY_TEST_RUNTIME/nearby-modem.wasm"
export NEARBY_TEST_WEB_MODEM="$NEARBY_TEST_RUNTIME/nearby-modem.wasm"
# QRCodeTests read the codes they make back with zbar (installed above).
NEARBY_TEST_QR_READER=$(command -v zbarimg || true)
export NEARBY_TEST_QR_READER

stage "services"
shopt -s nullglob
for service in Tools/scripts/services/*.sh; do
  echo "== starting $(basename "$service" .sh)" >&2
  # shellcheck source=/dev/null
  source "$service"
done

# Under the test command no test may skip for a missing service (TestService in TestSupport):
# one that needs a service not started here fails instead of being skipped.
export NEARBY_TEST_REQUIRE_SERVICES=1

# The unit targets (no service, no process, no socket: values and actors on virtual time) in one
# run, their tests all in parallel; then the other targets one at a time (the tests of a target
# run in parallel): on two cores, every target at once starves the timing-bounded tests of the
# processes and services they start. BeaconFramesTests and AudioModemTests run apart: their fuzzing
# and DSP hold both of the cooperative pool's threads for seconds at a time, and in one run with
# them the peer resolver's tests (which wait, bounded, for its tasks) failed.
unit_targets=(StrategyTests CommandLineSupportTests CoreTests ResolutionTests PeerResolutionTests ResolverWireTests
  MediumTestKitTests BackgroundPersistenceTests SystemdTests NearbyTestingTests)
# The test binary is run itself, as `swift test --skip-build` would run it, without the 4-8 s
# each `swift test` spends loading the package (about two minutes over the 25 runs).
stage "tests"
tests_binary="$(swift build --show-bin-path)/nearby-linuxPackageTests.xctest"
run_tests() { NO_COLOR=1 "$tests_binary" --testing-library swift-testing --filter "$1" 2>&1; }
failed=()
echo "== swift test ${unit_targets[*]}" >&2
if ! run_tests "^($(IFS='|'; echo "${unit_targets[*]}"))\."; then
  failed+=("${unit_targets[@]}")
fi
for folder in Tests/*Tests; do
  target=$(basename "$folder")
  [[ " ${unit_targets[*]} " == *" $target "* ]] && continue
  echo "== swift test $target" >&2
  if ! run_tests "^${target}\."; then
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "error: tests failed in: ${failed[*]}" >&2
  exit 1
fi

# BLE against the real BlueZ: ONE boot of a VM (qemu under TCG, virtme-ng) with the
# kernel's HCI layer, btvirt's two LE controllers and bluetoothd runs
# Tools/scripts/bluez-vm/vm-suite.sh, which runs in it, one after the other:
#   - check-nearby-ble.sh: `nearby ble status` must see both adapters powered and `nearby ble
#     scan` on hci1 must hear an Eddystone-UID advert added on hci0;
#   - every test of Tests/BLEBlueZVM (not in the loop above: the folder's name does not end in
#     Tests), from the test binary built above: MediumConformance for `.bluez()` (hci0 and
#     hci1), advertising while scanning, presence of still devices, bluetoothd restarts and
#     adapter loss, every kind of beacon heard and lost (active and low power), two managers
#     finding and losing each other and the scan-only case, RSSI 127, and any test added there
#     later;
#   - check-nearby-pubsub.sh: `nearby publish` on hci0 and `nearby subscribe` on hci1 over BLE,
#     each in an empty network namespace, with peer resolution over GATT (no server, no
#     network): found, then lost after the publisher's Ctrl-C; a 100 KiB message intact;
#   - the BLE benchmarks once, briefly (`nearby-bench ble-vm --short`, `gatt-peer --short`).
# It fails if any fails, printing every output; a VM that cannot boot fails the run with its
# console. Cost: the fresh-clone run of 2026-11-27 04:00 (2 cores, nothing else running) had
# the VM up and down in 537 s (the check 21 s, the tests 356 s, publish/subscribe over GATT
# 101 s, the BLE benchmarks 26 s); under heavy load (other builds beside it) 729-990 s. NEARBY_BLUEZ_VM_TIMEOUT (default here 1200 s) bounds it.
stage "bluez-vm"
echo "== BlueZ VM: nearby ble status and scan, the BLEBlueZVM tests, and nearby publish/subscribe, against the real bluetoothd" >&2
bin=$(swift build --show-bin-path)
# The release build (release-smoke.sh runs it, the packages reuse it, generate-manual with them)
# goes on beside the VM, niced: qemu's one vCPU keeps a core, the build takes the other. It
# took 7-13 minutes alone, after everything else; beside the VM it costs little more than the
# VM stage. Later `swift build` calls wait for SwiftPM's lock on .build until it is done.
release_log="$NEARBY_TEST_RUNTIME/release-build.log"
# A process group of its own (setsid), so that an early exit stops the compilers too.
setsid bash -c 'for product in nearby nearby-server nearby-restore nearby-bench generate-manual; do
    nice -n 10 swift build -c release --static-swift-stdlib --product "$product" || exit 1
  done' >"$release_log" 2>&1 </dev/null &
release_pid=$!
on_exit "kill -TERM -- -$release_pid 2>/dev/null; wait $release_pid 2>/dev/null"
NEARBY_BLUEZ_VM_TIMEOUT=${NEARBY_BLUEZ_VM_TIMEOUT:-1200} Tools/scripts/bluez-vm/run.sh \
  "$NEARBY_TEST_RUNTIME/bluez-vm" Tools/scripts/bluez-vm/vm-suite.sh "$bin/nearby" \
  "$bin/nearby-linuxPackageTests.xctest"

# The resolver server's HTTP API under schemathesis (from openapi.yaml), on SQLite and on the
# PostgreSQL started above; bounded (see the script).
stage "fuzz-api"
Tools/scripts/fuzz-api.sh

# The web console in a real headless Chromium (Selenium): sign in, register a beacon, attach
# data, make a namespace public, create and revoke a key, see a found event arrive live; a
# screenshot of each page at 1280 and 360 px under $NEARBY_TEST_RUNTIME/console-screenshots.
# About 15 s on 2 cores (the debug server is built already; Chromium starts once).
# They are kept after the run in .build/console-screenshots (the runtime folder is removed on
# exit), with failure.png when a step failed.
stage "console-browser"
Tools/scripts/console-browser.sh

# The phone's page (/web) in headless Chromium with a fake microphone playing a Linux box's
# recorded token (clean and at C/N0 30 dB-Hz), at 44.1 and 48 kHz: found and lost, the page's
# own publication heard by a Linux subscriber through a PulseAudio null sink, and the hostile
# cases (an admin key's link, another project's key, a spoofed sighting). About 70 s on 2
# cores; screenshots at 360 px, light and dark, kept in .build/web-screenshots.
stage "web-browser"
Tools/scripts/web-browser.sh

# The beacon parsers under libFuzzer, a bounded number of inputs each.
stage "fuzz-beacons"
Tools/scripts/fuzz-beacons.sh

# The release build, run: LAN publish/subscribe (peer and local server), beacons, nearby-restore.
stage "release"
echo "== the release build (started beside the VM stage)" >&2
if ! wait "$release_pid"; then
  cat "$release_log" >&2
  echo "error: the release build failed (above)" >&2
  exit 1
fi
if grep -E "^(${here}/)?(Modules|Plugins|Tools|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" \
  "$release_log" >&2; then
  echo "error: the release build has warnings in our code (above); fix them." >&2
  exit 1
fi
Tools/scripts/release-smoke.sh

# Every nearby-bench subcommand once, short, against that release build, with the services
# above (so that no benchmark rots); ble-vm and gatt-peer ran in the VM stage. Fails naming
# each subcommand that broke, never for a goal missed. Cost: 50-61 s (four runs on 2026-11-27,
# load average 5-8 with another CI run's release build; dispatch 12-21 s of it, lan-peer 12 s,
# the rest 0.2-6.4 s each; docs/benchmarks.md has each), about 40 s more than the two short
# benches release-smoke.sh ran before.
stage "bench-smoke"
Tools/scripts/bench-smoke.sh

# An app that depends on the library by version (Examples/NearbyExample), built and run
# against the release `nearby server`.
stage "example"
Tools/scripts/example-by-version.sh "$(swift build -c release --show-bin-path)/nearby"

# The Debian packages from that release build: built (lintian: no error), installed
# with apt, run with the toolchain hidden, the units verified (exposure at most 2.0), purged
# leaving nothing. Cost: the man pages' generator built in release, the packaging, and apt.
stage "packages"
Tools/scripts/package-check.sh
