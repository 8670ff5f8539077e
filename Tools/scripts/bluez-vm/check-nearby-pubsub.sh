#!/usr/bin/env bash
# Runs inside the BlueZ VM (Tools/scripts/bluez-vm/run.sh RESULTS check-nearby-pubsub.sh NEARBY):
# `nearby publish` and `nearby subscribe` over BLE between the VM's two adapters, against the
# real bluetoothd, with no server anywhere and no network between them (peer resolution
# over GATT): each process runs in an empty network namespace of its own (`unshare --net`: only a
# loopback that is down; the system bus is a socket file, so bluetoothd stays reachable).
#   1. `--ble-adapter hci7` (absent): exit 69, naming hci0 and hci1, the adapters that exist.
#   2. Peer resolution over GATT: `nearby subscribe --mediums ble --ble-adapter hci1 --mode
#      scan --json` and `nearby publish TEXT --mediums ble --ble-adapter hci0 --mode broadcast
#      --json`, with no --resolver (peer is the default) and no key (the open project): the
#      subscriber hears the token, connects to the advertiser and asks over GATT; it finds the
#      message (mediums ["ble"]) and keeps it while the publisher stays (15 s, past
#      lostAfter); Ctrl-C on the publisher unpublishes and the subscriber reports it lost,
#      having found it once.
#   3. The same with a message of the full 100 KiB (--file): found with its content intact.
# Each round prints the time from the publisher's "active" to the subscriber's "found"
# (docs/benchmarks.md, BLE GATT).
# Broadcast on one adapter and scan on the other: one adapter that scans cannot start its
# first advert on the real kernel (docs/bluez-vm-findings.md item D).
# Each step's output is left in $NEARBY_BLUEZ_VM_RESULTS/pubsub/.
set -euo pipefail
nearby=$1
results=${NEARBY_BLUEZ_VM_RESULTS:?run this through Tools/scripts/bluez-vm/run.sh}
python=$(cd "$(dirname "$0")/../../.." && pwd)/.venv/bin/python
out=$results/pubsub
mkdir -p "$out"
step() { echo "$(date +%T.%N | cut -c1-12) == $*"; }
# No network: each command in a namespace of its own, with nothing but a loopback that is down.
# `exec`: started with `&`, the function runs in a subshell; exec makes that subshell the
# command itself (unshare execs it in turn), so $! is nearby's pid and SIGINT reaches it (a
# background bash ignores SIGINT).
isolated() { exec unshare --net -- "$@"; }

# A home of its own: XDG folders in the VM's writable /tmp, the state (logs) in the results.
home=$(mktemp -d /tmp/nearby-pubsub.XXXXXX)
export HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data \
  XDG_STATE_HOME=$out/state XDG_RUNTIME_DIR=$home/runtime
unset NEARBY_API_KEY NEARBY_LAN_INTERFACE PULSE_SERVER NEARBY_SERVER
# A process that hangs is sent SIGABRT (exit_status): the Swift runtime then prints every
# thread's backtrace into its .err.
export SWIFT_BACKTRACE="enable=yes,threads=all,interactive=no,symbolicate=full"
mkdir -p "$XDG_RUNTIME_DIR"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# wait_event FILE SECONDS EXPR: waits until a JSON line `e` of FILE makes the Python EXPR true;
# prints it, or fails after SECONDS.
wait_event() {
  "$python" - "$@" <<'PY'
import json, sys, time
path, seconds, expr = sys.argv[1], float(sys.argv[2]), sys.argv[3]
deadline = time.monotonic() + seconds
while True:
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if eval(expr, {"e": e}):
            print(line)
            sys.exit(0)
    if time.monotonic() > deadline:
        sys.exit(f"no line of {path} with {expr} within {seconds:.0f} s")
    time.sleep(0.2)
PY
}

# exit_status PID SECONDS: sets `rc` to the exit status of background job PID (not in a
# subshell: only this shell can wait for its jobs), or fails after SECONDS.
exit_status() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then
      echo "process $pid did not exit within $2 s; its threads:" >&2
      timeout 120 gdb -p "$pid" -batch -ex "thread apply all bt 25" 2>&1 |
        grep -E "^Thread|^#" | cut -c1-220 >&2 || true
      return 1
    fi
    sleep 0.2
  done
  rc=0
  wait "$pid" || rc=$?
}

step "(no network) nearby subscribe --mediums ble --ble-adapter hci7 (no such adapter)"
set +e
(isolated "$nearby" subscribe --mediums ble --ble-adapter hci7 --json) >"$out/absent.out" 2>"$out/absent.err"
absent_rc=$?
set -e
cat "$out/absent.err"
[ "$absent_rc" = 69 ] || { echo "FAILED: exit $absent_rc, not 69"; exit 1; }
grep -q 'no Bluetooth adapter "hci7"; adapters here: hci0, hci1' "$out/absent.err" ||
  { echo "FAILED: the error does not name hci0 and hci1"; exit 1; }
echo "absent adapter check passed"

# round NAME [FILE]: one subscriber on hci1 (scan), one publisher on hci0 (broadcast) of
# "hello over BLE (NAME)", or of FILE's bytes; each in an empty network namespace.
round() {
  local name=$1 file=${2:-}
  local text="hello over BLE ($name)"
  local sub_out=$out/$name-subscribe.jsonl pub_out=$out/$name-publish.jsonl
  local what=("$text") match
  match="e.get('text') == $("$python" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$text")"
  if [ -n "$file" ]; then
    what=(--file "$file")
    # Compared with a file: the content's base64 (136 KiB) is over one argument's limit.
    base64 -w0 "$file" >"$file.b64"
    match="e.get('content') == open('$file.b64').read()"
  fi
  step "[$name] (no network) nearby subscribe --mediums ble --ble-adapter hci1 --mode scan --json"
  local started=$SECONDS
  isolated "$nearby" subscribe --mediums ble --ble-adapter hci1 --mode scan --log-level debug \
    --json >"$sub_out" 2>"$out/$name-subscribe.err" &
  local subscriber=$!
  pids+=("$subscriber")
  wait_event "$sub_out" 90 \
    'e["event"] == "medium" and e["medium"] == "ble" and e["available"] and "hci1" in e["detail"]'
  wait_event "$sub_out" 90 \
    'e["event"] == "note" and e["detail"].startswith("connected to peers (no server)") and "GATT" in e["detail"]'

  step "[$name] (no network) nearby publish ${what[*]} --mediums ble --ble-adapter hci0 --mode broadcast --json"
  isolated "$nearby" publish "${what[@]}" --mediums ble --ble-adapter hci0 --mode broadcast --log-level debug \
    --json >"$pub_out" 2>"$out/$name-publish.err" &
  local publisher=$!
  pids+=("$publisher")
  wait_event "$pub_out" 60 'e["event"] == "status" and e["status"] == "active"' | cut -c1-160
  if ! wait_event "$sub_out" 90 "e['event'] == 'found' and $match and e['mediums'] == ['ble']" |
    cut -c1-160; then
    # Each side's GATT and peer-resolution lines say where the answer stopped.
    for side in subscribe publish; do
      echo "-- the last GATT and peer lines of $name-$side.err:"
      grep -E "ble gatt|PeerResolution|peer resolution" "$out/$name-$side.err" | tail -n 40 |
        cut -c1-300
    done
    exit 1
  fi
  # JSON times: from the publisher's "active" to the subscriber's "found".
  step "[$name] found over BLE GATT $("$python" - "$pub_out" "$sub_out" <<'PY'
import json, sys
from datetime import datetime
def first(path, event):
    for line in open(path):
        if line.startswith("{") and json.loads(line)["event"] == event:
            return datetime.fromisoformat(json.loads(line)["time"].replace("Z", "+00:00"))
print(f"{(first(sys.argv[2], 'found') - first(sys.argv[1], 'status')).total_seconds():.1f} s after the publication was active")
PY
)"
  # Stay published past lostAfter (10 s): a still publisher stays found (refreshed over GATT).
  sleep 15
  if grep -q '"event":"lost"' "$sub_out"; then
    echo "FAILED: the subscriber lost the message while it was still published:"
    grep '"event":"lost"' "$sub_out" | cut -c1-160
    exit 1
  fi

  kill -INT "$publisher"
  exit_status "$publisher" 30
  [ "$rc" = 0 ] || { echo "FAILED: publish exited $rc after Ctrl-C"; cat "$out/$name-publish.err"; exit 1; }
  local stopped=$SECONDS
  wait_event "$sub_out" 60 "e['event'] == 'lost' and $match" | cut -c1-160
  step "[$name] lost $((SECONDS - stopped)) s after the publisher's Ctrl-C"
  # Found once, lost once: a still publisher is not lost and found again meanwhile.
  "$python" - "$sub_out" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mine = [e["event"] for e in events if e["event"] in ("found", "lost")]
if mine != ["found", "lost"]:
    sys.exit(f"FAILED: the subscriber saw {mine}, not found then lost")
PY
  kill -INT "$subscriber"
  exit_status "$subscriber" 30
  [ "$rc" = 0 ] || { echo "FAILED: subscribe exited $rc after Ctrl-C"; exit 1; }
  grep -h "peer resolution: received" "$out/$name-subscribe.err" "$out/$name-publish.err" || true
  step "[$name] passed in $((SECONDS - started)) s"
}

round small
head -c 102400 /dev/urandom >"$home/full.bin"
round full "$home/full.bin"
echo "publish/subscribe over BLE (peer resolution over GATT, no network) passed"
