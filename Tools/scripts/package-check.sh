#!/usr/bin/env bash
# The Debian packages as an operator meets them (test.sh runs this after the release stage, as
# root; it changes the machine's packages, so run it only where that is wanted):
#   1. Tools/scripts/package-deb.sh builds them, reusing the release build (lintian: no error);
#   2. `apt-get install ./….deb` installs all four;
#   3. with the Swift toolchain's folder hidden (a private mount namespace with an empty tmpfs
#      over it), the installed binaries run: `--version` of the three, `nearby audio encode` and
#      `decode`, the server's first start as its unit runs it (settings from
#      /etc/nearby/server.conf, state in /var/lib/nearby laid out as systemd lays it out for a
#      DynamicUser service) making the admin key readable only by root, and `nearby-server keys
#      list` reading the same settings;
#   4. the units verify (`systemd-analyze verify`), and the server's exposure
#      (`systemd-analyze security --offline=yes`) is at most 2.0;
#   5. `apt-get purge` leaves no file behind: /etc, /usr, /lib and /var (less apt's and dpkg's
#      own records, caches and logs) list the same files as before the install.
# This machine has no systemd as PID 1 (so the unit cannot be started here): the sandboxing is
# checked by systemd-analyze, the first start by running the unit's ExecStart by hand.
# Usage: Tools/scripts/package-check.sh [OUT, default a temporary folder]
set -euo pipefail
cd "$(dirname "$0")/../.."

[ "$(id -u)" -eq 0 ] || { echo "error: package-check.sh installs packages: run it as root" >&2; exit 1; }
out=${1:-$(mktemp -d "${NEARBY_TEST_RUNTIME:-/tmp}/debs.XXXXXX")}
work=$(mktemp -d "${NEARBY_TEST_RUNTIME:-/tmp}/package-check.XXXXXX")
installed=false
made_private=false
cleanup() {
  if $installed; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nearby-dbgsym nearby-server-dbgsym \
      nearby nearby-server >/dev/null 2>&1 || true
  fi
  # /var/lib/private is systemd's; made here only to stand in for it.
  if $made_private; then rmdir /var/lib/private 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== package-check: $*" >&2; }
fail() { echo "error: package-check: $*" >&2; exit 1; }

step "building the packages"
Tools/scripts/package-deb.sh "$out" --json >"$work/built.json"
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$work/built.json")
mapfile -t debs < <(grep -o '"/[^"]*\.deb"' "$work/built.json" | tr -d '"')
((${#debs[@]} == 4)) || fail "expected 4 packages, got: ${debs[*]}"

# What is on the machine before: every path, less what apt and dpkg keep for themselves.
snapshot() {
  find /etc /usr /lib /var -xdev \( -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \
    -o -path /var/log -o -path /var/tmp -o -path /var/backups \) -prune -o -print 2>/dev/null \
    | LC_ALL=C sort
}
snapshot >"$work/before.txt"

step "apt-get install ${debs[*]##*/}"
installed=true
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" </dev/null >"$work/apt.log" 2>&1 \
  || { cat "$work/apt.log" >&2; fail "apt-get install failed (above)"; }
for binary in /usr/bin/nearby /usr/bin/nearby-restore /usr/bin/nearby-server; do
  [ -x "$binary" ] || fail "$binary is not installed"
done

# The toolchain: the folder holding bin/swift's usr/ (/opt/swift for /opt/swift/usr/bin/swift).
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
[ -d "$toolchain" ] && [ "$toolchain" != / ] || fail "cannot tell the toolchain's folder ($toolchain)"

# The first start as the unit makes it: systemd gives a DynamicUser service
# /var/lib/private/nearby (the parent root's only, 0700) behind the link /var/lib/nearby.
[ -d /var/lib/private ] || { mkdir -m 0700 /var/lib/private; made_private=true; }
mkdir -p -m 0700 /var/lib/private/nearby
ln -sfn private/nearby /var/lib/nearby
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/nearby-server.service)

step "the installed binaries with $toolchain hidden"
cat >"$work/hidden.sh" <<EOF
set -euo pipefail
mount -t tmpfs -o size=1m,mode=0755 nearby-no-toolchain "$toolchain"
[ -z "\$(ls -A "$toolchain")" ] || { echo "the toolchain is still visible" >&2; exit 1; }
cd "$work"
for binary in nearby nearby-restore nearby-server; do
  got=\$(/usr/bin/\$binary --version)
  [ "\$got" = "$version" ] || { echo "\$binary --version printed '\$got', not $version" >&2; exit 1; }
  echo "\$binary --version: \$got"
done
/usr/bin/nearby audio encode --token 0123456789abcdef --out "$work/token.wav"
/usr/bin/nearby audio decode "$work/token.wav" | tee "$work/decoded.txt"
grep -q 0123456789abcdef "$work/decoded.txt" || { echo "nearby audio decode did not find the token" >&2; exit 1; }

# The unit's command line, run by hand until the first start has written its admin key.
$exec_start >"$work/server.log" 2>&1 &
server=\$!
for _ in \$(seq 300); do
  [ -s /var/lib/nearby/admin-api-key ] && break
  kill -0 \$server 2>/dev/null || { cat "$work/server.log" >&2; echo "the server ended" >&2; exit 1; }
  sleep 0.1
done
kill -TERM \$server; wait \$server || true
[ -s /var/lib/nearby/admin-api-key ] || { cat "$work/server.log" >&2; echo "no admin key after 30 s" >&2; exit 1; }
echo "admin key: \$(stat -c '%a %U' /var/lib/nearby/admin-api-key), under \$(stat -c '%a %U' /var/lib/private)"
/usr/bin/nearby-server keys list | tee "$work/keys.txt"
grep -q bootstrap "$work/keys.txt" || { echo "nearby-server keys list does not show the first key" >&2; exit 1; }
EOF
unshare --mount --propagation private bash "$work/hidden.sh" \
  || fail "an installed binary failed with the toolchain hidden (above)"
[ "$(stat -c %a /var/lib/nearby/admin-api-key)" = 600 ] || fail "the admin key is not mode 0600"
[ "$(stat -c %a /var/lib/private)" = 700 ] || fail "/var/lib/private is not root's alone"

step "systemd-analyze verify and security"
verify() {
  if ! systemd-analyze verify "$@" >"$work/verify.log" 2>&1 || [ -s "$work/verify.log" ]; then
    cat "$work/verify.log" >&2
    fail "systemd-analyze verify $* (above)"
  fi
}
verify /lib/systemd/system/nearby-server.service
# A template verifies as an instance; the user unit as a system one (no user manager here).
cp /usr/lib/systemd/user/nearby-restore@.service "$work/nearby-restore@com.example.app.service"
verify "$work/nearby-restore@com.example.app.service"
systemd-analyze security --offline=yes /lib/systemd/system/nearby-server.service \
  >"$work/security.log" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for nearby-server.service: \([0-9.]*\).*/\1/p' \
  "$work/security.log")
[ -n "$exposure" ] || { cat "$work/security.log" >&2; fail "systemd-analyze security gave no exposure"; }
echo "nearby-server.service exposure: $exposure (at most 2.0)" >&2
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || {
  cat "$work/security.log" >&2; fail "exposure $exposure is over 2.0"; }

step "apt-get purge"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nearby-dbgsym nearby-server-dbgsym nearby \
  nearby-server </dev/null >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "apt-get purge failed"; }
installed=false
if $made_private; then rmdir /var/lib/private; made_private=false; fi
snapshot >"$work/after.txt"
if ! diff "$work/before.txt" "$work/after.txt" >"$work/left.txt"; then
  cat "$work/left.txt" >&2
  fail "apt-get purge left these behind (> after, < gone)"
fi
ls /var/lib/dpkg/info/nearby* >/dev/null 2>&1 && fail "dpkg still has records of nearby packages"
echo "== package-check: passed (${debs[*]##*/}; exposure $exposure; purge left nothing)" >&2
