#!/usr/bin/env bash
# Every `nearby-bench` subcommand once, short, against the release build, so that no benchmark
# rots. Each runs with `--short`: a few seconds of real work, exit 1 when the
# benchmark itself breaks (nothing found, a request refused, a value read back wrong), never for
# a goal missed. Each is bounded by `timeout`; a failure does not stop the others, and the
# script fails at the end naming every subcommand that failed.
#
# test.sh runs it after release-smoke.sh (which builds nearby, nearby-server, nearby-restore
# and nearby-bench in release), with the services of Tools/scripts/services/ up:
#   audio-pulse, audio-crowd, audio-crowd-peer  PulseAudio (NEARBY_TEST_PULSE_SERVER), its null sink nearby_bench
#   lan          the network namespaces (NEARBY_TEST_NETNS; root), `nearby` and
#                `nearby-server` beside nearby-bench
#   server       PostgreSQL (NEARBY_TEST_POSTGRES_URL): a database of its own, two
#                nearby-server processes, wrk and pgbench
#   restore      nearby-restore beside nearby-bench
# ble and dbus start private dbus-daemons of their own. ble-vm and gatt-peer need the real
# bluetoothd: the BlueZ VM stage runs them (Tools/scripts/bluez-vm/vm-suite.sh, step 4).
# beacon-found runs through `nearby bench` (the user CLI running nearby-bench).
# By hand: source the services first (see Tools/scripts/services/README.md).
set -uo pipefail
cd "$(dirname "$0")/../.."

release=$(swift build -c release --show-bin-path)
bench="$release/nearby-bench"
for tool in nearby nearby-server nearby-restore nearby-bench; do
  if [ ! -x "$release/$tool" ]; then
    echo "error: $release/$tool is not built: run Tools/scripts/release-smoke.sh (it builds" \
      "the release tools) or swift build -c release --product $tool" >&2
    exit 1
  fi
done

failed=()
ran=()
times=()

# Tenths of seconds since the epoch (bash's clock), and such a count written as seconds.
now_tenths() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 100000)); }
tenths() { echo "$(($1 / 10)).$(($1 % 10))"; }

# Runs `nearby-bench NAME --short ARGS...` (with BENCH_VIA set, `nearby bench NAME --short
# ARGS...`) bounded by LIMIT seconds (SIGTERM, then SIGKILL 10 s later); the output goes
# through, a failure is remembered.

short_run() { # name limit args...
  local name=$1 limit=$2 rc=0 started
  started=$(now_tenths)
  shift 2
  local command=("$bench" "$name" --short "$@")
  if [ -n "${BENCH_VIA:-}" ]; then command=("$release/nearby" bench "$name" --short "$@"); fi
  echo "== nearby-bench $name --short${BENCH_VIA:+ (through nearby bench)}" >&2
  timeout -k 10 "$limit" "${command[@]}" 2>&1 || rc=$?
  local took
  took=$(tenths $(($(now_tenths) - started)))
  ran+=("$name")
  times+=("$name ${took} s")
  if ((rc == 124 || rc == 137)); then
    echo "error: nearby-bench $name --short did not finish within $limit s" >&2
    failed+=("$name")
  elif ((rc != 0)); then
    echo "error: nearby-bench $name --short exited $rc (above)" >&2
    failed+=("$name")
  else
    echo "-- nearby-bench $name --short: ok in $took s" >&2
  fi
}

# Fails the subcommand NAME at once when the service it needs is not up.
missing() { # name why
  echo "== nearby-bench $1 --short" >&2
  echo "error: nearby-bench $1 needs $2; run Tools/scripts/test.sh, or source" \
    "Tools/scripts/services/*.sh first" >&2
  ran+=("$1")
  failed+=("$1")
}

started_all=$(now_tenths)

short_run audio 120

if [ -n "${NEARBY_TEST_PULSE_SERVER:-}" ]; then
  short_run audio-pulse 120 --server "$NEARBY_TEST_PULSE_SERVER" --sink nearby_bench
  short_run audio-crowd 120 --server "$NEARBY_TEST_PULSE_SERVER" --sink nearby_bench
  short_run audio-crowd-peer 120 --server "$NEARBY_TEST_PULSE_SERVER" --sink nearby_bench
else
  missing audio-pulse "PulseAudio (NEARBY_TEST_PULSE_SERVER, Tools/scripts/services/pulseaudio.sh)"
  missing audio-crowd "PulseAudio (NEARBY_TEST_PULSE_SERVER, Tools/scripts/services/pulseaudio.sh)"
  missing audio-crowd-peer "PulseAudio (NEARBY_TEST_PULSE_SERVER, Tools/scripts/services/pulseaudio.sh)"
fi

short_run ble 120
BENCH_VIA=nearby short_run beacon-found 120
short_run beacons 60
short_run dbus 120
short_run dispatch 300
short_run identifiers 60

if [ -n "${NEARBY_TEST_NETNS:-}" ]; then
  short_run lan 120 --netns "$NEARBY_TEST_NETNS"
elif [ -n "${NEARBY_TEST_NETNS_SKIP:-}" ]; then
  # As the multi-host tests: no namespaces on this machine (not root), said, not hidden.
  echo "== nearby-bench lan --short: skipped: $NEARBY_TEST_NETNS_SKIP" >&2
else
  missing lan "the network namespaces (NEARBY_TEST_NETNS, Tools/scripts/services/netns.sh)"
fi

short_run lan-peer 300
short_run restore 120

if [ -n "${NEARBY_TEST_POSTGRES_URL:-}" ]; then
  # A database of its own on the test cluster (tables made, pgbench's made and dropped).
  database="${NEARBY_TEST_POSTGRES_URL%/*}/nearby_bench_smoke"
  if PGOPTIONS="-c client_min_messages=warning" psql -X -q "$NEARBY_TEST_POSTGRES_URL" \
    -c "DROP DATABASE IF EXISTS nearby_bench_smoke" \
    -c "CREATE DATABASE nearby_bench_smoke" >/dev/null; then
    short_run server 300 --database "$database" --instances 2
  else
    missing server "a database it can create on $NEARBY_TEST_POSTGRES_URL"
  fi
else
  missing server "PostgreSQL (NEARBY_TEST_POSTGRES_URL, Tools/scripts/services/postgres.sh)"
fi

short_run store 60
short_run web 120

echo "== nearby-bench ble-vm --short and gatt-peer --short: left to the BlueZ VM stage" \
  "(Tools/scripts/bluez-vm/vm-suite.sh step 4), which runs them against the real bluetoothd" >&2

# Every subcommand must be run above or named as left to the VM: a benchmark added later
# without a short run here fails this script instead of rotting unseen. `demo` is not a
# benchmark (IntegrationTests' DemoCommandTests run it).
listed=$("$bench" --experimental-dump-help \
  | python3 -c 'import json, sys; print(*(c["commandName"] for c in json.load(sys.stdin)["command"]["subcommands"]))')
for name in $listed; do
  case " ${ran[*]} ble-vm gatt-peer demo help " in
  *" $name "*) ;;
  *)
    echo "error: nearby-bench $name has no short run in Tools/scripts/bench-smoke.sh" >&2
    failed+=("$name")
    ;;
  esac
done

printf -v summary '%s, ' "${times[@]}"
echo "== nearby-bench short runs: ${summary%, } ($(tenths $(($(now_tenths) - started_all))) s in all)" >&2
if ((${#failed[@]})); then
  echo "error: nearby-bench subcommands failed: ${failed[*]}" >&2
  exit 1
fi
