# Sourced by the browser tests (console-browser.sh, web-browser.sh): a debug nearby-server on a
# fresh SQLite file in $2, on a free port of 127.0.0.1, waited for (bounded: 30 s) until it
# answers /healthz and has written its bootstrap admin key to $2/config/nearby/server-api-key.
# Sets `port` and `server_pid`; the caller stops the server. Its log is $2/server.log. Further
# arguments go to the server.
#   start_test_server NEARBY_SERVER WORK [ARGUMENT...]
start_test_server() {
  local nearby_server=$1 work=$2 i
  shift 2
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$work/config"
  XDG_CONFIG_HOME="$work/config" "$nearby_server" --database "$work/resolver.sqlite" \
    --port "$port" --log-level warning "$@" >"$work/server.log" 2>&1 &
  server_pid=$!
  for ((i = 0; i < 300; i++)); do
    if [ -s "$work/config/nearby/server-api-key" ] \
      && curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$work/server.log" >&2
      echo "error: the server did not start" >&2
      exit 1
    fi
    sleep 0.1
  done
  cat "$work/server.log" >&2
  echo "error: the server did not answer /healthz within 30 s" >&2
  exit 1
}
