#!/usr/bin/env bash
# The web console end to end in a real headless Chromium (Debian's chromium and
# chromium-driver, driven by Selenium from .venv): the debug `nearby-server` on a fresh SQLite
# file with its bootstrap admin key, then Tools/scripts/console-browser.py signs in, registers
# a beacon, attaches data, makes a namespace public, creates and revokes a key, and sees a
# found event arrive live. A screenshot of each page at 1280 and 360 px wide is kept under
# $NEARBY_TEST_RUNTIME/console-screenshots/ (a test artifact). Needs a built
# .build/debug/nearby-server and Tools/scripts/install-deps.sh build test; a missing browser is
# an error.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$(pwd)
nearby_server=.build/debug/nearby-server
python=.venv/bin/python
for tool in "$nearby_server" "$python"; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing (swift build --product nearby-server; Tools/scripts/install-deps.sh build test)" >&2
    exit 1
  fi
done
for tool in chromium chromedriver; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is missing: Tools/scripts/install-deps.sh build test installs chromium and chromium-driver" >&2
    exit 1
  fi
done

runtime=${NEARBY_TEST_RUNTIME:-/tmp}
screenshots="$runtime/console-screenshots"
rm -rf "$screenshots"
mkdir -p "$screenshots"
work=$(mktemp -d "$runtime/console-browser.XXXXXX")
server_pid=""
trap 'if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# shellcheck source=lib/test-server.sh
source Tools/scripts/lib/test-server.sh
start_test_server "$nearby_server" "$work"
status=0
# The screenshots outlive the run (test.sh removes the runtime folder on exit), failure.png
# included when a step failed: .build/console-screenshots.
keep() { rm -rf .build/console-screenshots && cp -r "$screenshots" .build/console-screenshots; }
NEARBY_CONSOLE_URL="http://127.0.0.1:$port" \
  NEARBY_CONSOLE_KEY="$(cat "$work/config/nearby/server-api-key")" \
  NEARBY_CONSOLE_SCREENSHOTS="$screenshots" \
  timeout --kill-after=10 300 "$python" "$here/Tools/scripts/console-browser.py" || status=$?
keep
if ((status != 0)); then
  echo "== the server's log:" >&2
  tail -n 50 "$work/server.log" >&2
  echo "error: the console's browser test failed (screenshots so far in .build/console-screenshots)" >&2
  exit 1
fi
echo "console browser test passed; screenshots in .build/console-screenshots" >&2
