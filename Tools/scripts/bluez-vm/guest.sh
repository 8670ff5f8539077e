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

# Two controllers in /sys/class/bluetooth are not enough: under TCG the kernel's HCI_Reset to one
# of btvirt's controllers sometimes times out ("hci0: Opcode 0x0c03 failed: -110" in dmesg);
# that controller keeps its sysfs entry but never reaches the management interface, and
# bluetoothd then sees only the other ("Number of controllers: 1"). So: count the controllers
# the management interface lists (btmgmt, before bluetoothd), and restart btvirt until both.
sysfs_adapters() { ls /sys/class/bluetooth 2>/dev/null | grep -c '^hci[0-9]*$' || true; }
mgmt_ready() {
  local info
  info=$(timeout 10 btmgmt info 2>/dev/null) || return 1
  grep -q '^hci0:' <<<"$info" && grep -q '^hci1:' <<<"$info"
}
btvirt_pid=""
for attempt in 1 2 3 4 5; do
  btvirt -L -l2 >>"$results/btvirt.log" 2>&1 &
  btvirt_pid=$!
  deadline=$((SECONDS + 20))
  until mgmt_ready || ((SECONDS > deadline)); do sleep 0.5; done
  if mgmt_ready; then
    say "btvirt up (attempt $attempt): hci0 and hci1 on the management interface"
    break
  fi
  say "btvirt attempt $attempt: $(sysfs_adapters) controller(s) in sysfs, not both on the" \
    "management interface ($(dmesg | grep -c 'Bluetooth: hci.*failed') HCI failures in dmesg);" \
    "restarting it"
  kill "$btvirt_pid" 2>/dev/null || true
  wait "$btvirt_pid" 2>/dev/null || true
  btvirt_pid=""
  deadline=$((SECONDS + 10))
  until (($(sysfs_adapters) == 0)) || ((SECONDS > deadline)); do sleep 0.2; done
done
[ -n "$btvirt_pid" ] || fail "btvirt did not bring up two usable controllers in 5 attempts"

mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile --print-address=4 4>"$results/dbus.address" ||
  fail "the system dbus-daemon did not start"
say "system bus: $(cat "$results/dbus.address")"

/usr/libexec/bluetooth/bluetoothd -n -d --experimental >>"$results/bluetoothd.log" 2>&1 &
bluetoothd_pid=$!
# bluetoothd owns org.bluez before it publishes the adapters, and publishes them one by one in
# no fixed order (hci1 before hci0 seen): wait until both are there and powered.
powered() {
  dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$1" \
    org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered 2>/dev/null |
    grep -q "boolean true"
}
deadline=$((SECONDS + 30))
while ((SECONDS <= deadline)); do
  powered hci0 && powered hci1 && break
  kill -0 "$bluetoothd_pid" 2>/dev/null || fail "bluetoothd exited (bluetoothd.log)"
  sleep 0.2
done
powered hci0 && powered hci1 ||
  fail "bluetoothd did not publish hci0 and hci1, powered, within 30 s (bluetoothd.log)"
say "bluetoothd up with hci0 and hci1 powered (pid $bluetoothd_pid)"

export NEARBY_BLUEZ_VM=1 NEARBY_BLUEZ_VM_RESULTS="$results"
say "running: $*"
set +e
"$@" >"$results/command.out" 2>&1
rc=$?
set -e
say "command exited $rc"
kill "$bluetoothd_pid" 2>/dev/null || true
echo "$rc" >"$results/command.rc"
