#!/usr/bin/env bash
# The release build as people install it: builds `nearby`, `nearby-server`, `nearby-restore` and
# the development tool `nearby-bench` with -c release --static-swift-stdlib (the Swift runtime
# linked in, as the Debian packages ship them: Tools/scripts/package-deb.sh reuses this build),
# then runs with those binaries (test.sh runs this after the debug tests, with the services up):
#   - two `nearby` processes that find and lose each other over the LAN medium with no server
#     (peer resolution) and through the local server, and the beacon registration, listing and deletion from the CLI (the
#     NearbyCLITests suites, pointed at the release binaries with NEARBY_TEST_EXECUTABLES);
#   - nearby-restore's tests (READY=1, journald, the store) against the release launcher.
# The release nearby-bench's subcommands run next, short, in Tools/scripts/bench-smoke.sh
# (beacon-found among them: the generated OpenAPI client's path a release build used to
# crash on).
# Any failure → a non-zero exit with the failing step named.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== swift build -c release --static-swift-stdlib (nearby, nearby-server, nearby-restore, nearby-bench)" >&2
log=$(mktemp "${NEARBY_TEST_RUNTIME:-/tmp}/release-build.XXXXXX")
for product in nearby nearby-server nearby-restore nearby-bench; do
  if ! swift build -c release --static-swift-stdlib --product "$product" >>"$log" 2>&1; then
    cat "$log" >&2
    echo "error: the release build of $product failed (above)" >&2
    exit 1
  fi
done
here=$(pwd)
if grep -E "^(${here}/)?(Modules|Plugins|Tools|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" \
  >&2; then
  echo "error: the release build has warnings in our code (above); fix them." >&2
  exit 1
fi
release=$(swift build -c release --static-swift-stdlib --show-bin-path)

echo "== release binaries: publish/subscribe over LAN, beacon administration, nearby-restore" >&2
NEARBY_TEST_EXECUTABLES="$release" swift test --skip-build \
  --filter '^NearbyCLITests\.(PublishSubscribeTests|BeaconAdminTests)' 2>&1
NEARBY_TEST_EXECUTABLES="$release" swift test --skip-build --filter '^NearbyRestoreTests\.' 2>&1

