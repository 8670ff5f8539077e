# Sourced by Tools/scripts/test.sh after dbus.sh: a desktop notification server double on the
# private session bus, python-dbusmock's notification_daemon template (apt-notify.txt). It owns
# org.freedesktop.Notifications and records every call; the tests read them with
# org.freedesktop.DBus.Mock.GetCalls on /org/freedesktop/Notifications.
#   NEARBY_TEST_NOTIFICATIONS=1         set once the double owns org.freedesktop.Notifications
#   NEARBY_TEST_NOTIFICATIONS_LOG=path  the double's call log

start_nearby_notifications() {
  local log="$NEARBY_TEST_RUNTIME/notifications.log" pid="$NEARBY_TEST_RUNTIME/notifications.pid"
  if ! /usr/bin/python3 -c 'import dbusmock' 2>/dev/null; then
    echo "error: python3-dbusmock is missing; run Tools/scripts/install-deps.sh build test (deps/test/apt-notify.txt)" >&2
    exit 1
  fi
  DBUS_SESSION_BUS_ADDRESS="$NEARBY_TEST_DBUS_SESSION_ADDRESS" /usr/bin/python3 -m dbusmock \
    --session --template notification_daemon --logfile "$log" \
    >"$NEARBY_TEST_RUNTIME/notifications.out" 2>&1 </dev/null &
  echo $! >"$pid"
  on_exit "kill \$(cat \"$pid\")"
  local i
  for ((i = 0; i < 100; i++)); do
    if gdbus call --address "$NEARBY_TEST_DBUS_SESSION_ADDRESS" --dest org.freedesktop.DBus \
      --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.NameHasOwner \
      org.freedesktop.Notifications 2>/dev/null | grep -q true; then
      export NEARBY_TEST_NOTIFICATIONS=1 NEARBY_TEST_NOTIFICATIONS_LOG="$log"
      return
    fi
    sleep 0.1
  done
  echo "error: the notification double did not own org.freedesktop.Notifications within 10 s:" >&2
  cat "$NEARBY_TEST_RUNTIME/notifications.out" >&2
  exit 1
}

start_nearby_notifications
