#!/usr/bin/env bash
# Fuzzes the beacon parsers with libFuzzer for a bounded number of inputs each (test.sh runs
# it; run it alone for longer: BEACON_FUZZ_RUNS=10000000 Tools/scripts/fuzz-beacons.sh).
# Builds Tools/fuzz/BeaconFuzz.swift with the BeaconFrames sources, over the Tokens module
# (swiftc -sanitize=fuzzer,address),
# then runs one parser at a time (see BeaconFuzz.swift) from the seeds in Tools/fuzz/corpus.
# A crash, a sanitizer report or a failed build → libFuzzer's report and a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${BEACON_FUZZ_RUNS:-100000}
work=$(mktemp -d "${NEARBY_TEST_RUNTIME:-/tmp}/beacon-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Two modules, as SwiftPM builds them: Tokens (the hex codec the parsers use), then the
# BeaconFrames sources with the entry point, all with the fuzzer and address sanitizer.
mapfile -t tokens < <(find Modules/Tokens -name '*.swift' | sort)
mapfile -t frames < <(find Modules/BeaconFrames -name '*.swift' | sort)
flags=(-sanitize=fuzzer,address -parse-as-library -O -swift-version 6
  -enable-upcoming-feature ExistentialAny)
echo "== fuzz: building the beacon fuzz target" >&2
mkdir -p "$work/modules"
# The linker's warnings about sanitizer symbols are noise: the log is shown only on failure.
if ! { swiftc "${flags[@]}" -module-name Tokens -wmo -emit-module \
  -emit-module-path "$work/modules/Tokens.swiftmodule" -c "${tokens[@]}" -o "$work/tokens.o" &&
  swiftc "${flags[@]}" -module-name BeaconFuzz -I "$work/modules" \
    "${frames[@]}" Tools/fuzz/BeaconFuzz.swift "$work/tokens.o" -o "$work/beacon-fuzz"; \
  } >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  exit 1
fi

for parser in advertisement service-data manufacturer url; do
  corpus="$work/corpus-$parser"
  cp -r "Tools/fuzz/corpus/$parser" "$corpus"
  echo "== fuzz $parser: $runs inputs" >&2
  if ! BEACON_FUZZ_PARSER=$parser "$work/beacon-fuzz" -runs="$runs" -max_total_time=120 \
    -max_len=64 -artifact_prefix="$work/" "$corpus" >"$work/$parser.log" 2>&1; then
    cat "$work/$parser.log" >&2
    for artifact in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
      [ -e "$artifact" ] && echo "failing input ($artifact): $(od -An -tx1 "$artifact" | tr -d ' \n')" >&2
    done
    exit 1
  fi
  tail -n 1 "$work/$parser.log" >&2
done
