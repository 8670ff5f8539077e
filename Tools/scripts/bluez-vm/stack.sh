# Sourced (not run) inside the BlueZ VM by guest.sh and control.sh: how the real BlueZ stack is
# brought up, so that a restart in a test brings it up exactly as the boot did.
#   stack_results=RESULTS; source stack.sh
# Needs: `say` and `fail` (log a step; give up) defined by the caller, and $stack_results (the
# VM's results folder: logs are appended there, and the pids of btvirt and bluetoothd are kept
# in btvirt.pid and bluetoothd.pid so that a later script can stop them).

stack_bluetoothd=/usr/libexec/bluetooth/bluetoothd

# Runs a daemon in the background with nothing open but /dev/null and LOG: no descriptor of the
# caller may leak into it. A test starts control.sh through Foundation's Process, which only
# learns that control.sh ended once every descriptor it gave it is closed; a bluetoothd or
# btvirt started by control.sh and holding one would make the test wait for its own timeout.
# Its pid goes to PIDFILE.
#   start_detached LOG PIDFILE COMMAND [ARG...]
start_detached() {
  local log=$1 pidfile=$2
  shift 2
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if ((fd > 2)); then eval "exec $fd>&-"; fi
    done
    exec "$@"
  ) </dev/null >>"$log" 2>&1 &
  echo $! >"$pidfile"
}

sysfs_adapters() { ls /sys/class/bluetooth 2>/dev/null | grep -c '^hci[0-9]*$' || true; }

# Both controllers on the management interface (what bluetoothd will see).
mgmt_ready() {
  local info
  info=$(timeout 10 btmgmt info 2>/dev/null) || return 1
  grep -q '^hci0:' <<<"$info" && grep -q '^hci1:' <<<"$info"
}

# Both controllers usable: on the management interface, or, when bluetoothd runs, published by
# it and powered (with bluetoothd busy initialising them, `btmgmt info` can miss its 10 s and
# the check would restart a btvirt that came up fine: seen in a test's add-adapters).
btvirt_ready() {
  mgmt_ready && return 0
  bluez_owned && powered hci0 && powered hci1
}

# Kills btvirt (its controllers go away: the kernel removes hci0 and hci1) and waits until
# sysfs lists none.
stop_btvirt() {
  local pid
  pid=$(cat "$stack_results/btvirt.pid" 2>/dev/null || true)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    # Not our child when a test restarts it: wait by polling, not with `wait`.
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS <= deadline)); do sleep 0.1; done
  fi
  rm -f "$stack_results/btvirt.pid"
  local deadline=$((SECONDS + 10))
  until (($(sysfs_adapters) == 0)) || ((SECONDS > deadline)); do sleep 0.2; done
}

# Two controllers in /sys/class/bluetooth are not enough: under TCG the kernel's HCI_Reset to one
# of btvirt's controllers sometimes times out ("hci0: Opcode 0x0c03 failed: -110" in dmesg);
# that controller keeps its sysfs entry but never reaches the management interface, and
# bluetoothd then sees only the other ("Number of controllers: 1"). So: count the controllers
# the management interface lists (btmgmt), and restart btvirt until both are there.
start_btvirt() {
  local attempt deadline
  for attempt in 1 2 3 4 5; do
    start_detached "$stack_results/btvirt.log" "$stack_results/btvirt.pid" btvirt -L -l2
    deadline=$((SECONDS + 20))
    until btvirt_ready || ((SECONDS > deadline)); do sleep 0.5; done
    if btvirt_ready; then
      say "btvirt up (attempt $attempt, pid $(cat "$stack_results/btvirt.pid")):" \
        "hci0 and hci1 on the management interface"
      return 0
    fi
    say "btvirt attempt $attempt: $(sysfs_adapters) controller(s) in sysfs, not both on the" \
      "management interface ($(dmesg | grep -c 'Bluetooth: hci.*failed') HCI failures in dmesg);" \
      "restarting it"
    stop_btvirt
  done
  fail "btvirt did not bring up two usable controllers in 5 attempts"
}

# bluetoothd as the boot starts it: debug log appended to bluetoothd.log, --experimental (the
# advertisement monitor API), nothing remembered (/var/lib/bluetooth is a tmpfs).
start_bluetoothd() {
  start_detached "$stack_results/bluetoothd.log" "$stack_results/bluetoothd.pid" \
    "$stack_bluetoothd" -n -d --experimental
}

# Stops bluetoothd (SIGTERM, or the signal given) and waits until it is gone and org.bluez has
# no owner.
stop_bluetoothd() {
  local signal=${1:-TERM} pid deadline
  pid=$(cat "$stack_results/bluetoothd.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  # Said in its log, so that what reads the log (vm-suite.sh) tells an end on purpose from a
  # death: a SIGKILL leaves no "Terminating". One already gone died on its own.
  if kill -0 "$pid" 2>/dev/null; then
    echo "bluetoothd[$pid]: stopped on purpose with SIG$signal (bluez-vm control)" \
      >>"$stack_results/bluetoothd.log"
  else
    echo "bluez-vm control: bluetoothd (pid $pid) was found dead before SIG$signal" \
      >>"$stack_results/bluetoothd.log"
  fi
  kill "-$signal" "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 10))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS <= deadline)); do sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "bluetoothd (pid $pid) did not exit on SIG$signal"
  rm -f "$stack_results/bluetoothd.pid"
  deadline=$((SECONDS + 10))
  while bluez_owned && ((SECONDS <= deadline)); do sleep 0.1; done
}

bluez_owned() {
  dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.bluez 2>/dev/null | grep -q "boolean true"
}

powered() {
  dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$1" \
    org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered 2>/dev/null |
    grep -q "boolean true"
}

# bluetoothd owns org.bluez before it publishes the adapters, and publishes them one by one in
# no fixed order (hci1 before hci0 seen): wait until both are there and powered.
wait_adapters_powered() {
  local pid deadline
  pid=$(cat "$stack_results/bluetoothd.pid" 2>/dev/null || true)
  deadline=$((SECONDS + 30))
  while ((SECONDS <= deadline)); do
    powered hci0 && powered hci1 && break
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "bluetoothd exited (bluetoothd.log)"
    sleep 0.2
  done
  powered hci0 && powered hci1 ||
    fail "bluetoothd did not publish hci0 and hci1, powered, within 30 s (bluetoothd.log)"
}
