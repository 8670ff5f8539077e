#!/usr/bin/env bash
# A probe, not a test: how long real bluetoothd keeps a discovered device while its advert
# repeats unchanged and after it stops, and what StopDiscovery does with two clients
# (docs/bluez-vm-findings.md items 10 and 11). Run it in the VM (about 2 min 30 s):
#   Tools/scripts/bluez-vm/run.sh /tmp/bluez-presence Tools/scripts/bluez-vm/probe-presence.sh
# Its output is printed; the signals bluetoothd sent are in /tmp/bluez-presence/monitor.txt.
set -euo pipefail
out=${NEARBY_BLUEZ_VM_RESULTS:?run this through Tools/scripts/bluez-vm/run.sh}
dbus-monitor --system "type='signal',sender='org.bluez'" >"$out/monitor.txt" 2>&1 &
monitor=$!
sleep 1
rc=0
# The Eddystone-UID advert of probe-bluetoothd.sh.
/usr/bin/python3 "$(dirname "$0")/probe-presence.py" \
  0303aafe1716aafe00e700112233445566778899aabbccddeeff0000 || rc=$?
kill "$monitor"
exit "$rc"
