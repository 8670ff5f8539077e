# Sourced by Tools/scripts/test.sh after dbus.sh: the BlueZ double (Tests/Executables/bluez-double,
# built by `swift build --build-tests`) on the private system bus, with three adapters
# (hci0, hci1, hci2) sharing one simulated air. It owns org.bluez like bluetoothd and is
# steered by the tests through org.nearby.BlueZDouble (power, adapter loss, AccessDenied
# mode, restart).
#   NEARBY_TEST_BLUEZ_DOUBLE=1  set once the double owns org.bluez

start_nearby_bluez_double() {
  local bin log ready
  bin="$(swift build --show-bin-path)/bluez-double"
  log="$NEARBY_TEST_RUNTIME/bluez-double.log"
  ready="$NEARBY_TEST_RUNTIME/bluez-double.ready"
  if [ ! -x "$bin" ]; then
    echo "error: $bin is missing: run 'swift build --build-tests' (test.sh does) first" >&2
    exit 1
  fi
  "$bin" --address "$NEARBY_TEST_DBUS_SYSTEM_ADDRESS" --adapters 3 --ready-file "$ready" \
    >"$log" 2>&1 &
  echo $! >"$NEARBY_TEST_RUNTIME/bluez-double.pid"
  on_exit "kill \$(cat \"$NEARBY_TEST_RUNTIME/bluez-double.pid\")"
  local i
  for ((i = 0; i < 100; i++)); do
    [ -e "$ready" ] && break
    sleep 0.1
  done
  if [ ! -e "$ready" ]; then
    echo "error: the BlueZ double did not come up within 10 s; its log ($log):" >&2
    cat "$log" >&2
    exit 1
  fi
  export NEARBY_TEST_BLUEZ_DOUBLE=1
}

start_nearby_bluez_double
