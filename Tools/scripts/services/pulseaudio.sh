# PulseAudio for the AudioPulse tests (sourced by Tools/scripts/test.sh).
#
# Two real servers, private to this run (own runtime folder, no D-Bus, no autospawn):
# - NEARBY_TEST_PULSE_SERVER: null sinks at 48 kHz float32 mono, one per test suite so that
#   suites running at once do not hear each other: "nearby" (conformance), "nearby_process"
#   (two processes), "nearby_managers" (two managers), "nearby_selftest" (nearby audio
#   selftest), "nearby_quiet" (nobody plays into it), "nearby_44k" and "nearby_16k" (devices
#   at other rates), "nearby_multihost" (nearby publish/subscribe in two network namespaces;
#   the socket is a file, so every namespace reaches the server), "nearby_bench" (the short
#   run of `nearby-bench audio-pulse`, Tools/scripts/bench-smoke.sh);
#   mediums play into a sink and record its monitor source ("nearby.monitor", ...).
# - NEARBY_TEST_PULSE_DENYING_SERVER: TCP on 127.0.0.1 with cookie authentication and a
#   cookie no client has, so every client gets "Access denied" (the microphone-error path).
# CI runs as root: pulseaudio then warns that it is meant for a user session but runs; -n
# skips the default configuration (no hardware, no D-Bus modules), the modules are given here.
start_pulseaudio() {
  if ! command -v pulseaudio >/dev/null 2>&1; then
    echo "error: pulseaudio is not installed; run Tools/scripts/install-deps.sh build test" >&2
    exit 1
  fi
  local dir="$NEARBY_TEST_RUNTIME/pulse"
  mkdir -p "$dir/run" "$dir/home" "$dir/deny-run"
  HOME="$dir/home" PULSE_RUNTIME_PATH="$dir/run" setsid pulseaudio -n --daemonize=no \
    --exit-idle-time=-1 --use-pid-file=no --disallow-exit --log-target=file:"$dir/pulse.log" \
    -L "module-native-protocol-unix auth-anonymous=1 socket=$dir/native" \
    -L "module-null-sink sink_name=nearby rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_process rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_managers rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_selftest rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_quiet rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_multihost rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_bench rate=48000 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_44k rate=44100 format=float32le channels=1" \
    -L "module-null-sink sink_name=nearby_16k rate=16000 format=s16le channels=1" \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/pulse.pid"
  on_exit "kill \$(cat \"$dir/pulse.pid\") 2>/dev/null"

  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  head -c 256 /dev/urandom >"$dir/deny-cookie"
  HOME="$dir/home" PULSE_RUNTIME_PATH="$dir/deny-run" setsid pulseaudio -n --daemonize=no \
    --exit-idle-time=-1 --use-pid-file=no --log-target=file:"$dir/deny.log" \
    -L "module-native-protocol-tcp auth-anonymous=0 auth-cookie-enabled=1 auth-cookie=$dir/deny-cookie listen=127.0.0.1 port=$port" \
    -L "module-null-sink sink_name=nearby rate=48000 format=float32le channels=1" \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/deny.pid"
  on_exit "kill \$(cat \"$dir/deny.pid\") 2>/dev/null"

  # test.sh runs with pipefail: read pactl's output first, then look into it.
  local i sources denied
  for ((i = 0; i < 100; i++)); do
    sources=$(PULSE_SERVER="unix:$dir/native" pactl list short sources 2>/dev/null || true)
    denied=$(PULSE_SERVER="tcp:127.0.0.1:$port" pactl info 2>&1 || true)
    if [[ $sources == *nearby_quiet.monitor* && $denied == *"Access denied"* ]]; then
      export NEARBY_TEST_PULSE_SERVER="unix:$dir/native"
      export NEARBY_TEST_PULSE_DENYING_SERVER="tcp:127.0.0.1:$port"
      return 0
    fi
    sleep 0.1
  done
  echo "error: PulseAudio did not start within 10 s; its logs:" >&2
  cat "$dir/pulse.log" "$dir/deny.log" >&2 || true
  exit 1
}
start_pulseaudio
