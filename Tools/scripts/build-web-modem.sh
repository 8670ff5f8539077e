#!/usr/bin/env bash
# Builds the web page's audio modem: Modules/AudioModem (and the Token of Modules/Tokens),
# compiled to WebAssembly with Embedded Swift, with the exports of Tools/web-modem and its
# small C runtime (an allocator and the mem* functions: wasm32-unknown-none has no libc).
#   Tools/scripts/build-web-modem.sh [OUT]    OUT: default .build/web/nearby-modem.wasm
# Needs the toolchain's Embedded Swift for wasm32-unknown-none-wasm, its clang and wasm-ld
# (Swift 6.2 or later ships them). About 10 s on 2 cores; prints the size, raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.build/web/nearby-modem.wasm}
for tool in swiftc clang wasm-ld; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-web-modem: $tool is not on PATH; it comes with the Swift toolchain (6.2 or later)" >&2
    exit 69
  fi
done
here=$(pwd)
case $out in /*) ;; *) out="$here/$out" ;; esac
work=$(mktemp -d /tmp/nearby-web-modem.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/modules" "$(dirname "$out")"
# -Osize: the page downloads it. No stack protector: there is no libc to provide its guard.
flags=(-target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo -Osize
  -parse-as-library -swift-version 6 -Xfrontend -disable-stack-protector)
# Built inside the work folder with relative output names: swiftc puts a hash of an object's
# path in it, and the module the server embeds (Tools/scripts/build-web-client.sh --check)
# must come out the same from any clone.
cd "$work"
swiftc "${flags[@]}" -module-name Tokens "$here/Modules/Tokens/Token.swift" \
  "$here/Modules/Tokens/TokenError.swift" "$here/Modules/Tokens/Hex.swift" \
  -emit-module -emit-module-path modules/Tokens.swiftmodule -c -o tokens.o
swiftc "${flags[@]}" -module-name AudioModem -I modules "$here"/Modules/AudioModem/*.swift \
  "$here/Tools/web-modem/ModemExports.swift" -c -o modem.o
clang --target=wasm32-unknown-none -O2 -nostdlib -ffreestanding \
  -c "$here/Tools/web-modem/runtime.c" -o runtime.o
# --strip-all: no names section (a fifth of the module), which the page does not need.
wasm-ld --no-entry --gc-sections --strip-all -o nearby-modem.wasm modem.o tokens.o runtime.o
cp nearby-modem.wasm "$out"
echo "build-web-modem: $out, $(wc -c <"$out") bytes, $(gzip -9 -n -c "$out" | wc -c) gzipped" >&2
