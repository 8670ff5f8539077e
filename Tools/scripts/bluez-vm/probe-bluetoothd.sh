#!/usr/bin/env bash
# A probe, not a test: records how the real bluetoothd answers (error names, Device1
# properties, signals, timing) for docs/bluez-vm-findings.md. Run it in the VM:
#   Tools/scripts/bluez-vm/run.sh /tmp/bluez-probe Tools/scripts/bluez-vm/probe-bluetoothd.sh
# Its output is printed; the signals bluetoothd sent are in /tmp/bluez-probe/monitor.txt.
# Uses Debian's python3 with dbus-python (python3-dbus, deps/test/apt-notify.txt).
set -euo pipefail
out=${NEARBY_BLUEZ_VM_RESULTS:?run this through Tools/scripts/bluez-vm/run.sh}
dbus-monitor --system "type='signal',sender='org.bluez'" >"$out/monitor.txt" 2>&1 &
monitor=$!
sleep 1
# An Eddystone-UID advert: UUID list (FEAA), service data FEAA: frame 0x00, TX -25 dBm,
# namespace 00112233445566778899, instance aabbccddeeff, 2 bytes RFU.
rc=0
/usr/bin/python3 "$(dirname "$0")/probe-bluetoothd.py" \
  0303aafe1716aafe00e700112233445566778899aabbccddeeff0000 || rc=$?
kill "$monitor"
exit "$rc"
