#!/usr/bin/env bash
# Builds the Debian packages of Nearby for Linux into OUT:
#   nearby_<version>_amd64.deb         the `nearby` CLI, `nearby-restore` and its systemd user
#                                      unit (nearby-restore@.service), man pages, bash/zsh/fish
#                                      completions
#   nearby-server_<version>_amd64.deb  the resolver server, its system unit (nearby-server.service:
#                                      DynamicUser, state in /var/lib/nearby, sandboxed) and its
#                                      settings file /etc/nearby/server.conf
#   nearby-dbgsym_…, nearby-server-dbgsym_…  the debug information split off the binaries
#                                      (/usr/lib/debug/.build-id/, as Debian's -dbgsym packages)
# The binaries are release builds with the Swift runtime linked statically (--static-swift-stdlib,
# a command-line option), so they run on a machine with no Swift toolchain; they need only the
# Debian libraries named in Depends (computed by dpkg-shlibdeps). The version is
# NearbyVersion.current (Modules/CommandLineSupport/NearbyVersion.swift), the one place it is
# written. Each package is checked with lintian: any error fails; the warnings we keep are
# listed, with why, in Tools/packaging/lintian-overrides/.
#
# Usage: Tools/scripts/package-deb.sh OUT [--json]
#   It reuses the release build in .build/release when it was made with the same options
#   (test.sh's release stage makes it so), else builds it (about 25 minutes on 2 cores).
#   --json prints {"version":…, "packages":[paths]} on stdout at the end.
# Needs: the build set and the package set of Tools/scripts/install-deps.sh (dpkg-dev, binutils,
# lintian: `Tools/scripts/install-deps.sh build package`).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

out=""
json=false
for argument in "$@"; do
  case "$argument" in
    --json) json=true ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option $argument (usage: $0 OUT [--json])" >&2; exit 64 ;;
    *) [ -z "$out" ] || { echo "error: one OUT folder only" >&2; exit 64; }; out=$argument ;;
  esac
done
[ -n "$out" ] || { echo "usage: $0 OUT [--json]" >&2; exit 64; }
for tool in dpkg-deb dpkg-shlibdeps lintian objcopy strip gzip; do
  command -v "$tool" >/dev/null || {
    echo "error: $tool is missing: run Tools/scripts/install-deps.sh build package" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(sed -n 's/^ *public static let current = "\([0-9][0-9.]*\)".*/\1/p' \
  Modules/CommandLineSupport/NearbyVersion.swift)
[ -n "$version" ] || { echo "error: no version in NearbyVersion.swift" >&2; exit 1; }
arch=$(dpkg --print-architecture)
maintainer="Nearby for Linux developers <nearby-linux@example.org>"
# Reproducible dates: the last commit's, else now.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH=$epoch

step() { echo "== package-deb: $*" >&2; }

# 1. The release build, the Swift runtime linked in.
build_flags=(-c release --static-swift-stdlib)
step "swift build ${build_flags[*]} (nearby, nearby-restore, nearby-server; reused when up to date)"
for product in nearby nearby-restore nearby-server; do
  log=$(mktemp)
  if ! swift build "${build_flags[@]}" --product "$product" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "error: the release build of $product failed (above)" >&2; exit 1
  fi
  rm -f "$log"
done
release=$(swift build "${build_flags[@]}" --show-bin-path)
for binary in nearby nearby-restore nearby-server; do
  if ldd "$release/$binary" | grep -q "libswiftCore\|/opt/swift\|not found"; then
    ldd "$release/$binary" >&2
    echo "error: $release/$binary loads the Swift runtime or a missing library (above): it was" \
      "not linked with --static-swift-stdlib" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/nearby-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT

# 2. Man pages (swift-argument-parser's generate-manual, on the release binaries: the plugin's
# own build step would rebuild without --static-swift-stdlib) and shell completions.
step "man pages and completions"
swift build "${build_flags[@]}" --product generate-manual >"$work/manual-build.log" 2>&1 || {
  cat "$work/manual-build.log" >&2; echo "error: building generate-manual failed" >&2; exit 1; }
generate_manual="$release/generate-manual"
manual_date=$(date -u -d "@$epoch" +%Y-%m-%d)
for binary in nearby nearby-restore nearby-server; do
  mkdir -p "$work/man/$binary" "$work/completions/$binary"
  # One page a tool, its subcommands inside (man nearby): the multi-page form names its pages
  # nearby.audio.encode, which whatis cannot index.
  "$generate_manual" "$release/$binary" --date "$manual_date" \
    --authors "Nearby for Linux developers" --output-directory "$work/man/$binary"
  # An empty line in a discussion comes out as an empty input line, which groff warns about:
  # the same vertical space as .sp, which says so.
  sed -i 's/^$/.sp/' "$work/man/$binary"/*.1
  for shell in bash zsh fish; do
    "$release/$binary" --generate-completion-script "$shell" >"$work/completions/$binary/$shell"
  done
  # bash-completion sources the file; a #! line in it is noise (lintian warns).
  sed -i '1{/^#!/d}' "$work/completions/$binary/bash"
done

# 3. The trees. install FILE MODE DEST
put() { install -D -m "$2" "$1" "$3"; }

# Moves the debug information of BINARY (installed at /usr/bin/NAME in TREE) to the dbgsym
# TREE, under its build id, and strips the binary.
split_debug() {
  local binary=$1 tree=$2 dbgsym=$3
  local id
  id=$(readelf -n "$binary" | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
  [ -n "$id" ] || { echo "error: $binary has no build id" >&2; exit 1; }
  local debug="$dbgsym/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  mkdir -p "$(dirname "$debug")"
  objcopy --only-keep-debug --compress-debug-sections "$binary" "$debug"
  chmod 0644 "$debug"
  strip --remove-section=.comment --remove-section=.note --strip-unneeded \
    "$tree/usr/bin/$(basename "$binary")"
  objcopy --add-gnu-debuglink="$debug" "$tree/usr/bin/$(basename "$binary")"
  echo "$id"
}

common_docs() {
  local tree=$1 package=$2
  local doc="$tree/usr/share/doc/$package"
  mkdir -p "$doc"
  put Tools/packaging/copyright 0644 "$doc/copyright"
  sed "s/@VERSION@/$version/; s/@DATE@/$(date -u -R -d "@$epoch")/" Tools/packaging/changelog \
    | gzip -9n >"$doc/changelog.gz"
  chmod 0644 "$doc/changelog.gz"
}

man_and_completions() {
  local tree=$1 binary=$2
  local page
  for page in "$work/man/$binary"/*.1; do
    mkdir -p "$tree/usr/share/man/man1"
    gzip -9n <"$page" >"$tree/usr/share/man/man1/$(basename "$page").gz"
    chmod 0644 "$tree/usr/share/man/man1/$(basename "$page").gz"
  done
  put "$work/completions/$binary/bash" 0644 "$tree/usr/share/bash-completion/completions/$binary"
  put "$work/completions/$binary/zsh" 0644 "$tree/usr/share/zsh/vendor-completions/_$binary"
  put "$work/completions/$binary/fish" 0644 \
    "$tree/usr/share/fish/vendor_completions.d/$binary.fish"
}

# The shared-library Depends of the binaries (dpkg-shlibdeps reads a debian/control).
shlib_depends() {
  local shlibs="$work/shlibs"
  mkdir -p "$shlibs/debian"
  printf 'Source: nearby\n\nPackage: nearby\nArchitecture: any\n' >"$shlibs/debian/control"
  (cd "$shlibs" && dpkg-shlibdeps -O "$@" 2>/dev/null) | sed -n 's/^shlibs:Depends=//p'
}

# build_package NAME TREE DESCRIPTION-FILE [extra control lines]
build_package() {
  local name=$1 tree=$2 control_text=$3
  mkdir -p "$tree/DEBIAN"
  (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z \
    | xargs -0r md5sum) >"$tree/DEBIAN/md5sums"
  local size
  size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
  printf '%s\nInstalled-Size: %s\n' "$control_text" "$size" >"$tree/DEBIAN/control"
  find "$tree" -type d -exec chmod 0755 {} +
  local deb="$out/${name}_${version}_${arch}.deb"
  dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
  echo "$deb"
}

packages=()

# nearby
step "nearby_${version}_${arch}.deb"
tree="$work/nearby"
dbg="$work/nearby-dbgsym"
put "$release/nearby" 0755 "$tree/usr/bin/nearby"
put "$release/nearby-restore" 0755 "$tree/usr/bin/nearby-restore"
put Tools/packaging/nearby-restore@.service 0644 "$tree/usr/lib/systemd/user/nearby-restore@.service"
man_and_completions "$tree" nearby
man_and_completions "$tree" nearby-restore
common_docs "$tree" nearby
depends=$(shlib_depends "$release/nearby" "$release/nearby-restore")
ids=()
for binary in nearby nearby-restore; do ids+=("$(split_debug "$release/$binary" "$tree" "$dbg")"); done
mkdir -p "$tree/usr/share/lintian/overrides"
put Tools/packaging/lintian-overrides/nearby 0644 "$tree/usr/share/lintian/overrides/nearby"
packages+=("$(build_package nearby "$tree" "Package: nearby
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: $depends
Suggests: nearby-server, bluez, pulseaudio
Section: net
Priority: optional
Homepage: https://example.org/nearby-linux
Description: publish and subscribe to the messages of nearby devices
 Nearby for Linux is an open implementation of the Nearby Messages model: apps
 publish small messages and subscribe to those of devices nearby, found through
 short rotating tokens over Bluetooth LE (BlueZ), near-ultrasonic audio
 (PulseAudio) and LAN multicast.
 .
 This package holds the nearby command-line tool (publish, subscribe, consent,
 background mode, BLE and audio tools, beacons) and nearby-restore, which keeps
 an app's background publications and subscriptions alive as a systemd user
 service (nearby-restore@APP.service).")")
common_docs "$dbg" nearby-dbgsym
packages+=("$(build_package nearby-dbgsym "$dbg" "Package: nearby-dbgsym
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: nearby (= $version)
Section: debug
Priority: optional
Build-Ids: ${ids[*]}
Description: debug symbols for nearby
 The debug information of nearby and nearby-restore, by build id.")")

# nearby-server
step "nearby-server_${version}_${arch}.deb"
tree="$work/nearby-server"
dbg="$work/nearby-server-dbgsym"
put "$release/nearby-server" 0755 "$tree/usr/bin/nearby-server"
# /lib, not /usr/lib: bookworm's lintian (2.116) wants system units there
# (systemd-service-file-outside-lib); user units stay in /usr/lib/systemd/user.
put Tools/packaging/nearby-server.service 0644 "$tree/lib/systemd/system/nearby-server.service"
put Tools/packaging/server.conf 0644 "$tree/etc/nearby/server.conf"
man_and_completions "$tree" nearby-server
common_docs "$tree" nearby-server
put docs/server-operators-guide.md 0644 "$tree/usr/share/doc/nearby-server/server-operators-guide.md"
depends=$(shlib_depends "$release/nearby-server")
ids=("$(split_debug "$release/nearby-server" "$tree" "$dbg")")
mkdir -p "$tree/DEBIAN"
echo /etc/nearby/server.conf >"$tree/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  put "Tools/packaging/nearby-server.$script" 0755 "$tree/DEBIAN/$script"
done
packages+=("$(build_package nearby-server "$tree" "Package: nearby-server
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: $depends
Section: net
Priority: optional
Homepage: https://example.org/nearby-linux
Description: resolver server for Nearby for Linux
 Nearby for Linux is an open implementation of the Nearby Messages model. Its
 resolver server turns \"device A heard device B's token\" into found and lost
 events, keeps beacon attachments and serves a web console.
 .
 This package runs it as a sandboxed system service (nearby-server.service,
 a dynamic user, state in /var/lib/nearby, SQLite by default or PostgreSQL),
 configured in /etc/nearby/server.conf. Its first start makes an admin API
 key, readable only by root, in /var/lib/nearby/admin-api-key.")")
common_docs "$dbg" nearby-server-dbgsym
packages+=("$(build_package nearby-server-dbgsym "$dbg" "Package: nearby-server-dbgsym
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: nearby-server (= $version)
Section: debug
Priority: optional
Build-Ids: ${ids[*]}
Description: debug symbols for nearby-server
 The debug information of nearby-server, by build id.")")

# 4. lintian: errors and warnings fail; a tag we keep is overridden, with why, in
# Tools/packaging/lintian-overrides/ (shipped in the packages, as Debian does). Informational
# tags are printed and left, for these reasons:
#   spelling-error-in-binary: strings of the statically linked dependencies (ICU's, NIO's);
#   hardening-no-bindnow, hardening-no-fortify-functions: Swift's driver links without -z now
#     and fortify applies to C; our C shims are a few lines that call libraries;
#   package-supports-alternative-init-but-no-init.d-script: the server is a systemd service
#     only (DynamicUser= and the sandbox have no sysvinit equivalent);
#   extended-description-is-probably-too-short: the -dbgsym packages, as Debian's own.
step "lintian"
lintian_log="$work/lintian.log"
# (lintian's own exit status is 0 unless it fails to run, or with --fail-on, which bookworm's
# 2.116 has: error.)
if ! lintian --tag-display-limit 0 --display-info --fail-on error "${packages[@]}" \
  >"$lintian_log" 2>&1; then
  cat "$lintian_log" >&2
  echo "error: lintian reports errors or could not run (above)" >&2
  exit 1
fi
cat "$lintian_log" >&2
if grep -q "^E: " "$lintian_log"; then
  echo "error: lintian reports errors (above)" >&2
  exit 1
fi
if grep -q "^W: " "$lintian_log"; then
  echo "error: lintian warns (above): fix it, or override it in Tools/packaging/lintian-overrides/ saying why" >&2
  exit 1
fi

for deb in "${packages[@]}"; do
  echo "built $deb ($(du -h "$deb" | cut -f1))" >&2
done
if $json; then
  printf '{"version":"%s","packages":[' "$version"
  first=true
  for deb in "${packages[@]}"; do
    $first || printf ','
    first=false
    printf '"%s"' "$deb"
  done
  printf ']}\n'
fi
