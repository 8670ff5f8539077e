#!/usr/bin/env bash
# Fuzzes the resolver server's HTTP API with schemathesis from Modules/ResolverAPI/openapi.yaml
# (test.sh runs it after the Swift tests): the debug `nearby-server` once on SQLite and once
# on PostgreSQL (a fresh database on NEARBY_TEST_POSTGRES_URL's cluster; an error when it is
# not set), each through schemathesis's phases: examples, coverage (boundary and
# invalid values of every schema), fuzzing (generated valid and invalid requests) and stateful
# (sequences along the document's `links`: register a device → report / events / unregister;
# register a beacon → attachments → delete). Checks: no 5xx, answers that conform to the
# document (status code, content type, headers, schema). Tools/scripts/fuzz-api-hooks.py
# supplies device secrets.
#
# Bounded: API_FUZZ_EXAMPLES cases per operation (default 80), a fixed seed (API_FUZZ_SEED),
# and a deadline of API_FUZZ_DEADLINE seconds per engine (default 240: the API has 20 operations,
# and a loaded machine took 149 s on PostgreSQL for 12 of them). Any failure → the
# reproduction (curl) printed by schemathesis and a non-zero exit. The servers are stopped on
# exit. Needs a built .build/debug/nearby-server (swift build --product nearby-server) and .venv
# (Tools/scripts/install-deps.sh build test).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$(pwd)
examples=${API_FUZZ_EXAMPLES:-80}
seed=${API_FUZZ_SEED:-13}
deadline=${API_FUZZ_DEADLINE:-240}
nearby_server=.build/debug/nearby-server
schemathesis=.venv/bin/schemathesis
for tool in "$nearby_server" "$schemathesis"; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing (swift build --product nearby-server; Tools/scripts/install-deps.sh build test)" >&2
    exit 1
  fi
done

work=$(mktemp -d "${NEARBY_TEST_RUNTIME:-/tmp}/api-fuzz.XXXXXX")
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# fuzz NAME DATABASE: serves DATABASE and runs schemathesis against it.
fuzz() {
  local name=$1 database=$2 port key i
  port=$(free_port)
  mkdir -p "$work/$name/config"
  # A fresh database has no key: the server makes one and writes it under XDG_CONFIG_HOME.
  # The rate limit is far above what the fuzzer sends, so it explores handlers, not 429s.
  XDG_CONFIG_HOME="$work/$name/config" "$nearby_server" --database "$database" --port "$port" \
    --requests-per-second 100000 --burst 100000 --log-level warning \
    >"$work/$name/server.log" 2>&1 &
  server_pid=$!
  for ((i = 0; i < 300; i++)); do
    if [ -s "$work/$name/config/nearby/server-api-key" ] \
      && curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
      break
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$work/$name/server.log" >&2
      echo "error: the $name server did not start" >&2
      return 1
    fi
    sleep 0.1
  done
  key=$(cat "$work/$name/config/nearby/server-api-key")
  echo "== fuzz API on $name: $examples examples per operation, seed $seed" >&2
  local status=0
  # Run from the work folder: schemathesis keeps its replay state (.schemathesis/) there.
  (cd "$work/$name" && NEARBY_FUZZ_URL="http://127.0.0.1:$port" NEARBY_FUZZ_API_KEY="$key" \
    SCHEMATHESIS_HOOKS=fuzz-api-hooks PYTHONPATH="$here/Tools/scripts" \
    timeout --signal=INT --kill-after=10 "$deadline" \
    "$here/$schemathesis" run "$here/Modules/ResolverAPI/openapi.yaml" --url "http://127.0.0.1:$port" \
    --header "X-Nearby-API-Key: $key" --generation-with-security-parameters false \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing,stateful --max-examples "$examples" --seed "$seed" \
    --generation-database none --request-timeout 10 --workers 1 --no-color \
    --report junit --report-dir "$work/$name/report" >"$work/$name/schemathesis.log" 2>&1) \
    || status=$?
  stop_server
  if ((status != 0)); then
    cat "$work/$name/schemathesis.log" >&2
    if ((status == 124 || status == 130)); then
      echo "error: the $name fuzz run passed its deadline of $deadline s" >&2
    fi
    echo "== the $name server's log:" >&2
    tail -n 50 "$work/$name/server.log" >&2
    echo "error: schemathesis found failures on $name (reproductions above)" >&2
    return 1
  fi
  tail -n 6 "$work/$name/schemathesis.log" >&2
}

if [ -z "${NEARBY_TEST_POSTGRES_URL:-}" ]; then
  echo "error: NEARBY_TEST_POSTGRES_URL is not set: the PostgreSQL run needs a server (test.sh" \
    "starts one; by hand: source Tools/scripts/services/postgres.sh)" >&2
  exit 1
fi
fuzz sqlite "$work/sqlite/resolver.sqlite"
database="f_$(date +%s)_$$"
psql_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
"$psql_bin/psql" -q -d "$NEARBY_TEST_POSTGRES_URL" -c "CREATE DATABASE $database" >/dev/null
fuzz postgres "${NEARBY_TEST_POSTGRES_URL%/*}/$database"
