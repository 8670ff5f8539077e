#!/usr/bin/env bash
# Runs inside the BlueZ VM, from a test (guest.sh exports its path as NEARBY_BLUEZ_VM_CONTROL):
# stops and starts parts of the real BlueZ stack the way guest.sh started them (stack.sh), and
# waits until they are back.
#   control.sh stop-bluetoothd [SIGNAL]  SIGTERM (default) or e.g. KILL; returns once
#                                        bluetoothd is gone and org.bluez has no owner
#   control.sh start-bluetoothd          starts it; returns once hci0 and hci1 are published
#                                        and powered
#   control.sh restart-bluetoothd [SIGNAL]  both
#   control.sh remove-adapters           kills btvirt: the kernel removes hci0 and hci1, and
#                                        bluetoothd its /org/bluez/hci0 and hci1
#                                        (InterfacesRemoved); returns once both are gone there
#   control.sh add-adapters              starts btvirt again (checked and retried as at boot);
#                                        returns once both are published and powered
#   control.sh ensure                    brings back whatever is missing (bluetoothd, btvirt),
#                                        then waits for both adapters powered: a test's cleanup
# Steps are logged to guest.log; errors go to stderr with exit status 1.
set -euo pipefail
results=${NEARBY_BLUEZ_VM_RESULTS:?run inside the BlueZ VM (Tools/scripts/bluez-vm/run.sh)}
say() { echo "$(date +%T.%N | cut -c1-12) control: $*" >>"$results/guest.log"; }
fail() {
  say "error: $*"
  echo "error: $*" >&2
  exit 1
}
stack_results=$results
# shellcheck source=stack.sh
source "$(dirname "$0")/stack.sh"

published() {
  dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$1" \
    org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Address \
    >/dev/null 2>&1
}

bluetoothd_running() {
  local pid
  pid=$(cat "$results/bluetoothd.pid" 2>/dev/null || true)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

command=${1:?usage: control.sh stop-bluetoothd|start-bluetoothd|restart-bluetoothd|remove-adapters|add-adapters|ensure}
say "$*"
case "$command" in
stop-bluetoothd)
  stop_bluetoothd "${2:-TERM}"
  ;;
start-bluetoothd)
  start_bluetoothd
  wait_adapters_powered
  ;;
restart-bluetoothd)
  stop_bluetoothd "${2:-TERM}"
  start_bluetoothd
  wait_adapters_powered
  ;;
remove-adapters)
  stop_btvirt
  if bluetoothd_running; then
    deadline=$((SECONDS + 20))
    while { published hci0 || published hci1; } && ((SECONDS <= deadline)); do sleep 0.2; done
    published hci0 || published hci1 && fail "bluetoothd still publishes an adapter 20 s after btvirt stopped"
  fi
  ;;
add-adapters)
  start_btvirt
  wait_adapters_powered
  ;;
ensure)
  if bluetoothd_running && powered hci0 && powered hci1; then
    say "ensure: nothing to do"
    exit 0
  fi
  if ! btvirt_ready; then
    stop_btvirt
    start_btvirt
  fi
  bluetoothd_running || start_bluetoothd
  wait_adapters_powered
  ;;
*)
  fail "unknown command $command"
  ;;
esac
say "$command done"
