#!/usr/bin/env bash
# A probe, not a test: does an advert stop going out when its adapter is powered off
# (`btmgmt power off`)? hci0 advertises (one `btmgmt add-adv` instance), hci1 looks for it with
# `btmgmt find -l` before and after hci0's power-off (docs/bluez-vm-findings.md item M).
# Run it in the VM (about 2 min):
#   Tools/scripts/bluez-vm/run.sh /tmp/bluez-poweroff Tools/scripts/bluez-vm/probe-poweroff.sh
# Its output is printed; btmon's trace is in RESULTS/btmon.txt.
set -uo pipefail
out=${NEARBY_BLUEZ_VM_RESULTS:?run this through Tools/scripts/bluez-vm/run.sh}
step() { echo "$(date +%T.%N | cut -c1-12) == $*"; }
btmon >"$out/btmon.txt" 2>&1 &
btmon=$!
sleep 1
advert=0303aafe1716aafe00e700112233445566778899aabbccddeeff0000
step "hci0: add-adv"
btmgmt --index 0 add-adv -d "$advert" 1 2>&1
# btmgmt quits at the end of its input (item J): keep it open for the scan's length.
find() { (sleep 14) | timeout 20 btmgmt --index 1 find -l 2>&1 | grep -E "dev_found|hci1" || true; }
step "hci1: find (hci0 advertising)"
before=$(find)
echo "$before"
step "hci0: power off"
btmgmt --index 0 power off 2>&1
sleep 2
step "hci1: find (hci0 powered off)"
after=$(find)
echo "$after"
kill "$btmon"
heard_before=$(grep -c dev_found <<<"$before")
heard_after=$(grep -c dev_found <<<"$after")
step "found before the power-off: $heard_before, after: $heard_after"
btmgmt --index 0 power on >/dev/null 2>&1
