#!/bin/bash
# Runs the release binary N times (no server needed). Expected each time: "done: unavailable("x")".
cd "$(dirname "$0")"
for i in $(seq ${1:-5}); do
  SWIFT_BACKTRACE=enable=no timeout 60 .build/release/Repro > out.txt 2>&1
  echo "run $i: exit $? | $(tail -c 120 out.txt | tr '\n' '|')"
done
