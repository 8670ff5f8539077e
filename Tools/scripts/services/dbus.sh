# Sourced by Tools/scripts/test.sh: two private D-Bus daemons for the tests, a "system" bus and
# a session bus, each with its own configuration in $NEARBY_TEST_RUNTIME/dbus.
#   NEARBY_TEST_DBUS_SYSTEM_ADDRESS   the private system bus (the BlueZ double lives there)
#   NEARBY_TEST_DBUS_SESSION_ADDRESS  the private session bus
# The system bus's policy lets everyone own and call everything except the name
# org.nearby.test.Forbidden, which answers AccessDenied (the tests of that error use it).

nearby_dbus_config() { # type socket
  cat <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>$1</type>
  <listen>unix:path=$2</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <deny own="org.nearby.test.Forbidden"/>
    <deny send_destination="org.nearby.test.Forbidden"/>
  </policy>
  <limit name="max_match_rules_per_connection">4096</limit>
  <limit name="max_replies_per_connection">4096</limit>
</busconfig>
XML
}

# Starts one bus and sets nearby_dbus_address (not called in $(...): on_exit must run here).
start_nearby_dbus() { # name type
  local dir="$NEARBY_TEST_RUNTIME/dbus" name="$1" type="$2"
  mkdir -p "$dir"
  nearby_dbus_config "$type" "$dir/$name.socket" >"$dir/$name.conf"
  if ! dbus-daemon --config-file="$dir/$name.conf" --fork --nosyslog \
    --print-address=3 --print-pid=4 3>"$dir/$name.address" 4>"$dir/$name.pid"; then
    echo "error: dbus-daemon did not start the private $name bus (config $dir/$name.conf);" \
      "is the dbus-daemon package installed (Tools/scripts/install-deps.sh build test)?" >&2
    exit 1
  fi
  on_exit "kill \$(cat \"$dir/$name.pid\")"
  nearby_dbus_address=$(head -n1 "$dir/$name.address")
}

if ! command -v dbus-daemon >/dev/null 2>&1; then
  echo "error: dbus-daemon is missing; run Tools/scripts/install-deps.sh build test (deps/test/apt-ble.txt)" >&2
  exit 1
fi
start_nearby_dbus system system
NEARBY_TEST_DBUS_SYSTEM_ADDRESS=$nearby_dbus_address
start_nearby_dbus session session
NEARBY_TEST_DBUS_SESSION_ADDRESS=$nearby_dbus_address
export NEARBY_TEST_DBUS_SYSTEM_ADDRESS NEARBY_TEST_DBUS_SESSION_ADDRESS
