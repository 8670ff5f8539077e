#!/usr/bin/env bash
# Boots a virtual machine with the real BlueZ (the kernel's HCI layer, btvirt's two virtual LE
# controllers, bluetoothd) and runs a command in it:
#   Tools/scripts/bluez-vm/run.sh RESULTS COMMAND [ARG...]
# virtme-ng (vng, in .venv) boots Debian's kernel (linux-image-amd64) under qemu with TCG
# (--disable-kvm: a KVM guest hangs at boot on our CI machines) over a read-only view of the
# host's files, so the binaries built on the host run inside unchanged. RESULTS (made empty
# here) is the one writable folder; Tools/scripts/bluez-vm/guest.sh brings up the stack there
# and leaves the command's output and exit status in it. This script prints the command's
# output and exits with its status; when the VM does not get that far it prints the VM's
# console and the guest's log and exits 1 (never a skip). NEARBY_BLUEZ_VM_TIMEOUT (seconds,
# default 600) bounds the whole boot and run.
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
if (($# < 2)); then
  echo "usage: $0 RESULTS COMMAND [ARG...]" >&2
  exit 2
fi
results=$1
shift
vng="$here/.venv/bin/vng"
kernel=$(ls -v /boot/vmlinuz-*-amd64 2>/dev/null | tail -n1 || true)
for need in "$vng" /usr/bin/qemu-system-x86_64 /usr/bin/btvirt /usr/libexec/bluetooth/bluetoothd \
  /usr/bin/busybox "$kernel"; do
  if [ -z "$need" ] || [ ! -e "$need" ]; then
    echo "error: the BlueZ VM rig needs ${need:-a kernel in /boot/vmlinuz-*-amd64}: run" \
      "Tools/scripts/install-deps.sh build test (deps/test/apt-bluez-vm.txt, requirements-bluez-vm.txt)" >&2
    exit 1
  fi
done

mkdir -p "$results"
results=$(cd "$results" && pwd)
find "$results" -mindepth 1 -delete
command_line=$(printf '%q ' "$here/Tools/scripts/bluez-vm/guest.sh" "$results" "$@")
timeout_s=${NEARBY_BLUEZ_VM_TIMEOUT:-600}
started=$(date +%s)
echo "== bluez-vm: booting $(basename "$kernel") under TCG (timeout ${timeout_s} s)" >&2
set +e
# stdin from /dev/null: vng must not wait for a terminal; its console goes to console.log.
# 2 GiB: with 1 GiB a CI run lost the test process without a word in the last suite (the
# debug test binary is 220 MB, bluetoothd, btvirt and two nearby processes run beside it);
# vm-suite.sh prints the kernel's OOM lines when a step dies of a signal.
PATH="$here/.venv/bin:$PATH" timeout --kill-after=15 "$timeout_s" "$vng" --run "$kernel" --disable-kvm --memory 2G \
  --cpus 2 --rwdir="$results" --cwd "$here" --verbose --exec "$command_line" \
  </dev/null >"$results/console.log" 2>&1
vm_rc=$?
set -e
took=$(($(date +%s) - started))
if [ ! -e "$results/command.rc" ]; then
  echo "error: the BlueZ VM did not run the command (vng exit $vm_rc after ${took} s;" \
    "124 is the timeout). Its console ($results/console.log):" >&2
  tail -n 80 "$results/console.log" >&2 || true
  if [ -e "$results/guest.log" ]; then
    echo "-- guest.log:" >&2
    cat "$results/guest.log" >&2
  fi
  exit 1
fi
rc=$(cat "$results/command.rc")
cat "$results/command.out"
echo "== bluez-vm: command exited $rc; VM up and down in ${took} s (results in $results)" >&2
exit "$rc"
