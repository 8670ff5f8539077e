#!/usr/bin/env bash
# The phone's page (/web) end to end in a real headless Chromium (Debian's chromium and
# chromium-driver, driven by Selenium from .venv), against the debug `nearby-server` on a fresh
# SQLite file and the debug `nearby` as the Linux box: Tools/scripts/web-browser.py says what
# it checks. Two private PulseAudio servers (44.1 and 48 kHz default rates, which Chromium's
# AudioContext takes) with four null sinks each: web_box (the box plays there; its monitor
# is recorded for Chromium's fake microphone), web_out (Chromium plays there; a Linux
# subscriber listens to its monitor), web_sub (the subscriber's own frames) and web_none
# (whose monitor a box listens to when it should hear nobody). Screenshots at
# 360 px, light and dark, are kept in .build/web-screenshots. Needs the debug build and
# Tools/scripts/install-deps.sh build test; a missing browser is an error. About 2 minutes on
# 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$(pwd)
# NEARBY_WEB_BIN: another build's binaries (a release build's folder), else the debug build.
bin=${NEARBY_WEB_BIN:-$(swift build --show-bin-path)}
python=.venv/bin/python
for tool in "$bin/nearby-server" "$bin/nearby" "$python"; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing (swift build; Tools/scripts/install-deps.sh build test)" >&2
    exit 1
  fi
done
for tool in chromium chromedriver pulseaudio parec; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is missing: Tools/scripts/install-deps.sh build test installs it" >&2
    exit 1
  fi
done

runtime=${NEARBY_TEST_RUNTIME:-/tmp}
work=$(mktemp -d "$runtime/web-browser.XXXXXX")
screenshots="$work/screenshots"
mkdir -p "$screenshots"
pids=()
server_pid=""
cleanup() {
  local pid
  for pid in "${pids[@]}" $server_pid; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}" $server_pid; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A PulseAudio server whose default rate is $1 (its daemon.conf, found through HOME).
start_pulse() {
  local rate=$1 dir="$work/pulse-$1"
  mkdir -p "$dir/home/.config/pulse" "$dir/run"
  printf 'default-sample-rate = %s\nalternate-sample-rate = %s\n' "$rate" "$rate" \
    >"$dir/home/.config/pulse/daemon.conf"
  HOME="$dir/home" PULSE_RUNTIME_PATH="$dir/run" setsid pulseaudio -n --daemonize=no \
    --exit-idle-time=-1 --use-pid-file=no --disallow-exit --log-target=file:"$dir/pulse.log" \
    -L "module-native-protocol-unix auth-anonymous=1 socket=$dir/native" \
    -L "module-null-sink sink_name=web_out rate=$rate format=float32le channels=1" \
    -L "module-null-sink sink_name=web_box rate=$rate format=float32le channels=1" \
    -L "module-null-sink sink_name=web_sub rate=$rate format=float32le channels=1" \
    -L "module-null-sink sink_name=web_none rate=$rate format=float32le channels=1" \
    </dev/null >/dev/null 2>&1 &
  pids+=($!)
  local i
  for ((i = 0; i < 100; i++)); do
    if PULSE_SERVER="unix:$dir/native" pactl list short sources 2>/dev/null | grep -q web_sub.monitor; then
      return 0
    fi
    sleep 0.1
  done
  echo "error: PulseAudio at $rate Hz did not start:" >&2
  cat "$dir/pulse.log" >&2 || true
  exit 1
}
start_pulse 44100
start_pulse 48000

# shellcheck source=lib/test-server.sh
source Tools/scripts/lib/test-server.sh
key() {
  "$bin/nearby-server" keys create --no-config --database "$work/resolver.sqlite" \
    --project "$1" --role "${2:-client}" --json \
    | "$python" -c 'import json, sys; print(json.load(sys.stdin)["key"])'
}
# The page's client key is also the key of the peer network the server joins (on lo, on a
# group port of its own so that other tests' peers are not this one's). The bridge checks the
# key when the server starts, so the keys are made first: the server then makes no bootstrap
# key, and the admin key is written where it would have written its own.
client_key=$(key web)
printf '%s\n' "$client_key" >"$work/peer-key"
mkdir -p "$work/config/nearby"
key default admin >"$work/config/nearby/server-api-key"
peer_port=$("$python" -c 'import random; print(random.randint(20000, 39999))')
start_test_server "$bin/nearby-server" "$work" --peer-key-file "$work/peer-key" \
  --peer-interface lo --peer-group-port "$peer_port"

status=0
NEARBY_WEB_URL="http://127.0.0.1:$port" \
  NEARBY_WEB_CLIENT_KEY="$client_key" \
  NEARBY_WEB_PEER_PORT="$peer_port" \
  NEARBY_WEB_OTHER_KEY="$(key elsewhere)" \
  NEARBY_WEB_ADMIN_KEY="$(cat "$work/config/nearby/server-api-key")" \
  NEARBY_WEB_NEARBY="$bin/nearby" \
  NEARBY_WEB_WORK="$work" \
  NEARBY_WEB_PULSE_44100="unix:$work/pulse-44100/native" \
  NEARBY_WEB_PULSE_48000="unix:$work/pulse-48000/native" \
  NEARBY_WEB_SCREENSHOTS="$screenshots" \
  timeout --kill-after=10 600 "$python" "$here/Tools/scripts/web-browser.py" || status=$?
rm -rf .build/web-screenshots && cp -r "$screenshots" .build/web-screenshots
if ((status != 0)); then
  echo "== the server's log:" >&2
  tail -n 30 "$work/server.log" >&2
  for f in "$work"/*.stderr; do
    echo "== $(basename "$f"):" >&2
    tail -n 20 "$f" >&2
  done
  echo "error: the web page's browser test failed (screenshots in .build/web-screenshots)" >&2
  exit 1
fi
echo "web page browser test passed; screenshots in .build/web-screenshots" >&2
