#!/usr/bin/env bash
# Builds Examples/NearbyExample the way an app developer's package meets ours: as a dependency
# by version. SwiftPM applies its rules for versioned dependencies (no unsafe flags, products
# only) to a package named by URL and version, and hides them behind a `path:` dependency, so:
#   1. the work tree as it is now (committed or not) becomes one commit in a temporary bare
#      repository, tagged 0.1.0;
#   2. the example's Package.swift (unchanged: it names https://example.org/nearby-linux.git,
#      from: "0.1.0") is resolved with a SwiftPM mirror from that URL to the bare repository;
#   3. the example is built, and run against a `nearby-server` started here: two devices find
#      and lose a message over the LAN medium on loopback.
# Usage: Tools/scripts/example-by-version.sh [path to a built `nearby`, default .build/debug]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
nearby=${1:-$(swift build --show-bin-path)/nearby}
nearby_server=$(dirname "$nearby")/nearby-server
for tool in "$nearby" "$nearby_server"; do
  [ -x "$tool" ] || { echo "error: $tool is not built (swift build --product $(basename "$tool"))" >&2; exit 1; }
done

work=$(mktemp -d "${NEARBY_TEST_RUNTIME:-/tmp}/example.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== example: the library as a versioned dependency (tag 0.1.0 of a temporary repository)" >&2
# A snapshot of the work tree, untracked files included (ignored ones not), without touching
# the real index or any branch.
export GIT_INDEX_FILE="$work/index"
git read-tree HEAD
git add -A .
tree=$(git write-tree)
unset GIT_INDEX_FILE
commit=$(GIT_AUTHOR_NAME=ci GIT_AUTHOR_EMAIL=ci@localhost GIT_COMMITTER_NAME=ci \
  GIT_COMMITTER_EMAIL=ci@localhost git commit-tree "$tree" -p HEAD -m "example build snapshot")
git init --quiet --bare "$work/nearby-linux.git"
git push --quiet "$work/nearby-linux.git" "$commit:refs/heads/main"
git -C "$work/nearby-linux.git" tag 0.1.0 main

# The example in a folder of its own (its Package.resolved and mirror settings stay out of the
# repository). It builds in this package's own build folder: the dependencies it shares with
# us (NIO, AsyncHTTPClient, swift-crypto...) are already compiled there by test.sh's debug
# build and are reused as they are (80 s instead of 170 s standalone on 2 quiet cores, 444 s
# under load average 8: measured 2026-11-27, with the generated OpenAPI code committed and no
# build plugin, so no OpenAPI generator, OpenAPIKit or Yams in the build); our modules are
# compiled again from the tagged snapshot. SwiftPM's checks on a versioned dependency (no
# unsafe flags, products only) apply all the same: they are made when the manifest of the
# dependency is loaded, whatever the build folder. The next `swift build` here compiles our
# modules from the work tree again.
cp -r Examples/NearbyExample "$work/app"
config="$work/swiftpm-config"
swift package --package-path "$work/app" --config-path "$config" config set-mirror \
  --original https://example.org/nearby-linux.git --mirror "$work/nearby-linux.git"
build_log="$work/build.log"
if ! swift build --package-path "$work/app" --config-path "$config" \
  --scratch-path "$root/.build" >"$build_log" 2>&1; then
  cat "$build_log" >&2
  echo "error: the example app did not build against the library by version (above)" >&2
  exit 1
fi
example=$(swift build --package-path "$work/app" --config-path "$config" \
  --scratch-path "$root/.build" --show-bin-path)/NearbyExample

echo "== example: run against nearby-server" >&2
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state"
"$nearby_server" --host 127.0.0.1 --port "$port" --log-level warning >"$work/server.log" 2>&1 &
server_pid=$!
key_file="$XDG_CONFIG_HOME/nearby/server-api-key"
for _ in $(seq 1 150); do
  if [ -s "$key_file" ] && curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.2
done
[ -s "$key_file" ] || { cat "$work/server.log" >&2; echo "error: the server wrote no key" >&2; exit 1; }
lan_port=$(python3 -c 'import random; print(random.randint(40001, 60000))')
if ! timeout 120 "$example" --server "http://127.0.0.1:$port" --api-key "$(cat "$key_file")" \
  --interface lo --port "$lan_port" --timeout 60; then
  cat "$work/server.log" >&2
  echo "error: the example app did not find and lose its message (above)" >&2
  exit 1
fi
