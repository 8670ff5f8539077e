# PostgreSQL for the server's store tests: a private cluster on a free loopback port, trust
# authentication for user "nearby", fsync off (test data only). Exports NEARBY_TEST_POSTGRES_URL
# (the "postgres" maintenance database; tests create a database each).
start_postgres() {
  local bin port
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "error: PostgreSQL server binaries not found under /usr/lib/postgresql (apt package 'postgresql')" >&2
    return 1
  fi
  NEARBY_PG_DIR=$(mktemp -d /tmp/nearby-pg.XXXXXX)
  as_postgres=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$NEARBY_PG_DIR"
    as_postgres=(runuser -u postgres --)
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_postgres[@]}" "$bin/initdb" -D "$NEARBY_PG_DIR/data" -U nearby --auth=trust -E UTF8 \
    >"$NEARBY_PG_DIR/initdb.log" 2>&1 || { cat "$NEARBY_PG_DIR/initdb.log" >&2; return 1; }
  "${as_postgres[@]}" "$bin/pg_ctl" -D "$NEARBY_PG_DIR/data" -l "$NEARBY_PG_DIR/server.log" -w \
    -o "-p $port -k $NEARBY_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
    start >/dev/null || { cat "$NEARBY_PG_DIR/server.log" >&2; return 1; }
  on_exit "${as_postgres[*]} $bin/pg_ctl -D $NEARBY_PG_DIR/data -m fast -w stop >/dev/null; rm -rf $NEARBY_PG_DIR"
  export NEARBY_TEST_POSTGRES_URL="postgres://nearby@127.0.0.1:$port/postgres"
  echo "PostgreSQL on $NEARBY_TEST_POSTGRES_URL" >&2
}
start_postgres
