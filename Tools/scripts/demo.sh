#!/usr/bin/env bash
# A newcomer's first command: installs the build and demo sets only (not the test set's qemu,
# Chromium, PostgreSQL...), builds every executable they run next (debug): `nearby`,
# `nearby-server` (`nearby server`, `--resolver local`), `nearby-restore` (background work) and
# `nearby-bench` (the benchmarks and the demo's simulated air), says where they are, and runs
# `nearby demo` (pass --json for one event a line).
set -euo pipefail
cd "$(dirname "$0")/../.."
Tools/scripts/install-deps.sh build demo
# nearby-bench first: it links nearly every module (the server's and the test kits too), so
# the three after it mostly link. One at a time: `swift build` takes one --product (given
# several, 6.3 builds the last only), and plain `swift build` would also build the tests'
# support targets.
products=(nearby-bench nearby nearby-server nearby-restore)
echo "building ${products[*]} (debug; the first build fetches and compiles the" \
  "dependencies: several minutes)" >&2
for i in "${!products[@]}"; do
  echo "[$((i + 1))/${#products[@]}] swift build --product ${products[i]}" >&2
  swift build --product "${products[i]}" >&2
done
bin=$(swift build --show-bin-path)
echo "built in $bin; to run them as \`nearby ...\`:" >&2
echo "  export PATH=\"$bin:\$PATH\"" >&2
echo "then, in two terminals: nearby subscribe / nearby publish hello (docs/user-guide.md)" >&2
echo "running nearby demo" >&2
exec "$bin/nearby" demo "$@"
