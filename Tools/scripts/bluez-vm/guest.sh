#!/usr/bin/env bash
# Runs INSIDE the virtual machine that Tools/scripts/bluez-vm/run.sh boots (virtme-ng: the host's
# files, with writes under /etc, /var, /tmp, /usr… going to throw-away overlays): brings up the
# real BlueZ stack, then runs a command.
#   guest.sh RESULTS COMMAND [ARG...]
# RESULTS is the writable folder shared with the host. Left there:
#   guest.log        this script's own steps, with timestamps
#   bluetoothd.log   bluetoothd's output (-d: debug)
#   btvirt.log       btvirt's output
#   command.out      COMMAND's stdout and stderr
#   command.rc       COMMAND's exit status, written last (its absence: the VM never got there)
# The stack: hci_vhci, `btvirt -L -l2` (two virtual LE controllers in one emulated air; checked
# and retried, it sometimes brings up only one), a system dbus-daemon, `bluetoothd
# --experimental`. The command runs with NEARBY_BLUEZ_VM=1 and the stack's variables below.
set -euo pipefail
results=$1
shift
exec 3>>"$results/guest.log"
say() { echo "$(date +%T.%N | cut -c1-12) $*" >&3; }
fail() {
  say "error: $*"
  echo "error: $*" >"$results/command.out"
  echo 97 >"$results/command.rc"
  exit 97
}
say "guest up: kernel $(uname -r), $(nproc) cpus, user $(id -un)"

# bluetoothd keeps adapter settings in /var/lib/bluetooth: start from none, whatever the host has.
mkdir -p /var/lib/bluetooth
mount -t tmpfs tmpfs /var/lib/bluetooth || fail "cannot mount a tmpfs on /var/lib/bluetooth"

modprobe hci_vhci || fail "modprobe hci_vhci failed"
say "hci_vhci loaded"

stack_results=$results
# shellcheck source=stack.sh
source "$(dirname "$0")/stack.sh"
start_btvirt

mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile --print-address=4 4>"$results/dbus.address" ||
  fail "the system dbus-daemon did not start"
say "system bus: $(cat "$results/dbus.address")"

start_bluetoothd
wait_adapters_powered
say "bluetoothd up with hci0 and hci1 powered (pid $(cat "$results/bluetoothd.pid"))"

export NEARBY_BLUEZ_VM=1 NEARBY_BLUEZ_VM_RESULTS="$results"
# Tests restart bluetoothd and btvirt the same way through this (see control.sh).
export NEARBY_BLUEZ_VM_CONTROL="$(cd "$(dirname "$0")" && pwd)/control.sh"
say "running: $*"
set +e
"$@" >"$results/command.out" 2>&1
rc=$?
set -e
say "command exited $rc"
kill "$(cat "$results/bluetoothd.pid" 2>/dev/null)" 2>/dev/null || true
echo "$rc" >"$results/command.rc"
