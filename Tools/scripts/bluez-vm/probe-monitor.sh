#!/usr/bin/env bash
# A probe, not a test: what reaches a scanner on hci1 from a still advert on hci0 under an
# advertisement monitor (several RSSI settings) and under discovery, at every layer: the
# controller's LE Advertising Reports and the kernel's scan commands (btmon), bluetoothd's
# DeviceFound/DeviceLost calls to the monitor and its Device1 signals (the probe's log).
# docs/bluez-vm-findings.md items F and G. Run it in the VM (about 5 min):
#   NEARBY_BLUEZ_VM_TIMEOUT=900 Tools/scripts/bluez-vm/run.sh /tmp/bluez-monitor \
#     Tools/scripts/bluez-vm/probe-monitor.sh [PHASES]
# PHASES (default all) picks phases of probe-monitor.py by name, comma-separated.
# Output: the probe's timeline, then a per-phase count of btmon's lines (probe-monitor.py
# --summary); btmon's whole trace is in RESULTS/btmon.txt.
set -euo pipefail
out=${NEARBY_BLUEZ_VM_RESULTS:?run this through Tools/scripts/bluez-vm/run.sh}
here=$(dirname "$0")
btmon -T -C 250 >"$out/btmon.txt" 2>&1 &
btmon=$!
sleep 2
rc=0
# The Eddystone-UID advert of probe-bluetoothd.sh; the monitor's pattern is Eddystone's (AD
# 0x16 starting AA FE), as the medium's beacon monitor.
/usr/bin/python3 "$here/probe-monitor.py" --phases "${1:-all}" \
  0303aafe1716aafe00e700112233445566778899aabbccddeeff0000 >"$out/timeline.txt" 2>&1 || rc=$?
sleep 1
kill "$btmon" 2>/dev/null || true
wait "$btmon" 2>/dev/null || true
cat "$out/timeline.txt"
/usr/bin/python3 "$here/probe-monitor.py" --summary "$out/timeline.txt" "$out/btmon.txt" || rc=$?
exit "$rc"
