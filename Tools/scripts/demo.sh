#!/usr/bin/env bash
# Builds the `nearby` tool and `nearby-bench` (the development tool that holds the simulated
# air) and runs `nearby demo` (pass --json for one event a line).
set -euo pipefail
cd "$(dirname "$0")/../.."
Tools/scripts/install-deps.sh
echo "building nearby (the first build fetches and compiles the dependencies)..." >&2
swift build --product nearby-bench >&2
swift build --product nearby >&2
exec "$(swift build --show-bin-path)/nearby" demo "$@"
