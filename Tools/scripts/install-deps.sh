#!/usr/bin/env bash
# Installs what building and testing need on Debian/Ubuntu, only what is missing (idempotent).
#
# Debian packages: the base list below plus every line of Tools/scripts/deps/apt-*.txt (one file
# per feature, '#' comments allowed). Python packages for the test doubles: every line of
# Tools/scripts/deps/requirements-*.txt, installed into .venv at the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v swift >/dev/null 2>&1; then
  echo "error: the Swift toolchain (6.1 or later) is not on PATH." >&2
  echo "Install it from swift.org (swiftly: 'curl -O https://download.swift.org/swiftly/linux/swiftly-\$(uname -m).tar.gz'," >&2
  echo "then 'swiftly init'), or put an unpacked toolchain's usr/bin on PATH, and run this again." >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

apt_packages=(git pkg-config ca-certificates curl)
shopt -s nullglob
for list in Tools/scripts/deps/apt-*.txt; do
  while read -r package _; do
    [[ -z "$package" || "$package" == \#* ]] && continue
    apt_packages+=("$package")
  done <"$list"
done

missing=()
for package in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

requirements=(Tools/scripts/deps/requirements-*.txt)
if ((${#requirements[@]})); then
  stamp=.venv/.installed
  want=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
  if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing the Python test doubles into .venv" >&2
    python3 -m venv .venv
    for file in "${requirements[@]}"; do
      .venv/bin/pip install --quiet --disable-pip-version-check -r "$file"
    done
    echo "$want" >"$stamp"
  fi
fi
