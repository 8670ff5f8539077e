#!/usr/bin/env bash
# Installs what building and testing need on Debian/Ubuntu, only what is missing (idempotent).
# Later work adds packages to APT_PACKAGES (libdbus-1-dev, libpulse-dev, libsystemd-dev, ...).
set -euo pipefail

APT_PACKAGES=(git pkg-config ca-certificates)

if ! command -v swift >/dev/null 2>&1; then
  echo "error: the Swift toolchain (6.1 or later) is not on PATH." >&2
  echo "Install it from swift.org (swiftly: 'curl -O https://download.swift.org/swiftly/linux/swiftly-\$(uname -m).tar.gz'," >&2
  echo "then 'swiftly init'), or put an unpacked toolchain's usr/bin on PATH, and run this again." >&2
  exit 1
fi

missing=()
for package in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
