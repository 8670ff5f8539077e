# PostgreSQL for the server's store tests: a private cluster on a free loopback port, trust
# authentication for user "nearby", fsync off (test data only). Exports NEARBY_TEST_POSTGRES_URL
# (the "postgres" maintenance database; tests create a database each).
#
# TLS is on (the plain URL still works: the server accepts both): a private CA and a server
# certificate for localhost and 127.0.0.1 are made in the service's folder, and
# NEARBY_TEST_POSTGRES_CA names the CA's certificate (tests connect with sslmode=verify-full).
# Members of the role NEARBY_TEST_POSTGRES_PASSWORD_GROUP log in over TCP with a password
# (scram-sha-256), so tests can make a role with one and prove it is sent.

# A CA and a server certificate in $1 (kept when there), the key 0600 for the server's user.
make_postgres_certificates() {
  local dir=$1 owner=$2
  mkdir -p "$dir"
  if [ ! -s "$dir/ca.crt" ] || [ ! -s "$dir/server.crt" ] || [ ! -s "$dir/server.key" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj "/CN=Nearby test CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      >/dev/null 2>&1 || { echo "error: openssl could not make the test CA" >&2; return 1; }
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "/CN=localhost" -keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1 \
      || { echo "error: openssl could not make the server key" >&2; return 1; }
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
      -set_serial "0x$(openssl rand -hex 8)" -days 3650 -extfile "$dir/server.ext" \
      -out "$dir/server.crt" >/dev/null 2>&1 \
      || { echo "error: openssl could not sign the server certificate" >&2; return 1; }
    rm -f "$dir/ca.key" "$dir/server.csr" "$dir/server.ext"
  fi
  chmod 0600 "$dir/server.key"
  chmod 0644 "$dir/server.crt" "$dir/ca.crt"
  if [ -n "$owner" ]; then chown "$owner" "$dir/server.key" "$dir/server.crt"; fi
}

start_postgres() {
  local bin port group=nearby_password_users
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "error: PostgreSQL server binaries not found under /usr/lib/postgresql (apt package 'postgresql')" >&2
    return 1
  fi
  NEARBY_PG_DIR=$(mktemp -d /tmp/nearby-pg.XXXXXX)
  as_postgres=()
  owner=
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$NEARBY_PG_DIR"
    as_postgres=(runuser -u postgres --)
    owner=postgres:
  fi
  make_postgres_certificates "$NEARBY_PG_DIR/tls" "$owner" || return 1
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_postgres[@]}" "$bin/initdb" -D "$NEARBY_PG_DIR/data" -U nearby --auth=trust -E UTF8 \
    >"$NEARBY_PG_DIR/initdb.log" 2>&1 || { cat "$NEARBY_PG_DIR/initdb.log" >&2; return 1; }
  # First match wins: the group's members need a password, everyone else is trusted.
  { echo "host all +$group 127.0.0.1/32 scram-sha-256"; cat "$NEARBY_PG_DIR/data/pg_hba.conf"; } \
    >"$NEARBY_PG_DIR/pg_hba.conf"
  "${as_postgres[@]}" cp "$NEARBY_PG_DIR/pg_hba.conf" "$NEARBY_PG_DIR/data/pg_hba.conf"
  "${as_postgres[@]}" "$bin/pg_ctl" -D "$NEARBY_PG_DIR/data" -l "$NEARBY_PG_DIR/server.log" -w \
    -o "-p $port -k $NEARBY_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c ssl=on -c ssl_cert_file=$NEARBY_PG_DIR/tls/server.crt -c ssl_key_file=$NEARBY_PG_DIR/tls/server.key" \
    start >/dev/null || { cat "$NEARBY_PG_DIR/server.log" >&2; return 1; }
  on_exit "${as_postgres[*]} $bin/pg_ctl -D $NEARBY_PG_DIR/data -m fast -w stop >/dev/null; rm -rf $NEARBY_PG_DIR"
  "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U nearby -d postgres \
    -c "CREATE ROLE $group NOLOGIN" >/dev/null \
    || { echo "error: cannot create the role $group" >&2; return 1; }
  export NEARBY_TEST_POSTGRES_URL="postgres://nearby@127.0.0.1:$port/postgres"
  export NEARBY_TEST_POSTGRES_CA="$NEARBY_PG_DIR/tls/ca.crt"
  export NEARBY_TEST_POSTGRES_PASSWORD_GROUP="$group"
  echo "PostgreSQL on $NEARBY_TEST_POSTGRES_URL (TLS: CA $NEARBY_TEST_POSTGRES_CA)" >&2
}
start_postgres
