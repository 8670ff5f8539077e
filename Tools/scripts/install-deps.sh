#!/usr/bin/env bash
# Installs what the named sets need on Debian/Ubuntu, only what is missing (idempotent, never
# asks: no stdin). Usage: install-deps.sh [--list] [SET...]; with no SET, the build set.
#
# A set is a folder Tools/scripts/deps/<set>/: Debian packages, one a line, in its apt-*.txt
# (one file per feature, '#' comments allowed), Python packages in its requirements-*.txt,
# installed into .venv at the repository root. Adding a set is adding a folder.
#   build  what `swift build` of every product needs (git, pkg-config, the -dev libraries of the
#          system-library targets CDBus, CPulse, CSystemd and of GRDB's SQLite)
#   demo   what `nearby demo` and `nearby publish`/`nearby subscribe` need beyond build
#   test   what the test command needs beyond build: the services it starts, the BlueZ VM,
#          Chromium, PostgreSQL, wrk, the Python test doubles
#   package  what Tools/scripts/package-deb.sh and package-check.sh need: dpkg-dev, binutils,
#          lintian, systemd-analyze, man
# demo.sh installs build and demo; test.sh build, test and package. The sets are split so that a
# newcomer's first command does not wait for qemu, a kernel and Chromium.
# --list prints the sets' packages ("apt NAME", "pip REQUIREMENT"), installed or not, and exits.
set -euo pipefail
cd "$(dirname "$0")/../.."

deps=Tools/scripts/deps
list_only=false
sets=()
for argument in "$@"; do
  case "$argument" in
    --list) list_only=true ;;
    -*)
      echo "usage: $0 [--list] [SET...]" >&2
      exit 64
      ;;
    *) sets+=("$argument") ;;
  esac
done
((${#sets[@]})) || sets=(build)
for set in "${sets[@]}"; do
  if [ ! -d "$deps/$set" ]; then
    echo "error: no set '$set'; the sets are the folders of $deps: $(ls "$deps" | tr '\n' ' ')" >&2
    exit 64
  fi
done

shopt -s nullglob
apt_packages=()
requirements=()
for set in "${sets[@]}"; do
  for list in "$deps/$set"/apt-*.txt; do
    while read -r package _; do
      [[ -z "$package" || "$package" == \#* ]] && continue
      apt_packages+=("$package")
    done <"$list"
  done
  requirements+=("$deps/$set"/requirements-*.txt)
done

if $list_only; then
  for package in "${apt_packages[@]}"; do echo "apt $package"; done
  for file in "${requirements[@]}"; do
    grep -Ev '^[[:space:]]*(#|$)' "$file" | sed 's/^/pip /'
  done
  exit 0
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "error: the Swift toolchain (6.1 or later) is not on PATH." >&2
  echo "Install it from swift.org (swiftly: 'curl -O https://download.swift.org/swiftly/linux/swiftly-\$(uname -m).tar.gz'," >&2
  echo "then 'swiftly init'), or put an unpacked toolchain's usr/bin on PATH, and run this again." >&2
  exit 1
fi
# On PATH is not enough: an unpacked toolchain without its own system packages is there but
# cannot run (in a fresh debootstrap of bookworm: libncurses.so.6 missing).
if ! swift --version >/dev/null 2>&1; then
  echo "error: 'swift --version' fails: $(swift --version 2>&1 | head -n1)" >&2
  echo "The toolchain's own system packages are missing: 'swiftly init' installs them; for an" >&2
  echo "unpacked toolchain, swift.org lists them (https://www.swift.org/install/linux/)." >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for package in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "install-deps (${sets[*]}): installing ${missing[*]}" >&2
  # env: sudo resets the environment, DEBIAN_FRONTEND must reach apt-get (and debconf) itself.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" </dev/null
else
  echo "install-deps (${sets[*]}): the ${#apt_packages[@]} Debian packages are installed" >&2
fi

# One stamp per set, so that installing another set's requirements later does not make this
# one's look stale (and reinstall them).
for set in "${sets[@]}"; do
  files=("$deps/$set"/requirements-*.txt)
  ((${#files[@]})) || continue
  stamp=.venv/.installed-$set
  want=$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)
  if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-deps ($set): installing into .venv:" \
      "$(cat "${files[@]}" | grep -Ev '^[[:space:]]*(#|$)' | tr '\n' ' ')" >&2
    [ -x .venv/bin/python ] || python3 -m venv .venv
    for file in "${files[@]}"; do
      .venv/bin/pip install --quiet --disable-pip-version-check -r "$file" </dev/null
    done
    echo "$want" >"$stamp"
  fi
done
