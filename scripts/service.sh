# A background service of the tests (a broker, a tracing backend), started
# and stopped the same way whatever it is. Sourced by the scripts that run
# one; they set, before using these functions:
#   service_name   what messages call it ("Jaeger", "the broker")
#   service_dir    where its pid file and log go
#   service_file   the name of both ($service_file.pid, $service_file.log)
# and define `answers`, which succeeds once it serves.

service_pid() { cat "$service_dir/$service_file.pid" 2>/dev/null; }
service_running() { [ -n "$(service_pid)" ] && kill -0 "$(service_pid)" 2>/dev/null; }

# Starts COMMAND... in the background, its output appended to the log.
service_launch() {
  mkdir -p "$service_dir"
  nohup "$@" >>"$service_dir/$service_file.log" 2>&1 &
  echo $! >"$service_dir/$service_file.pid"
}

# Waits up to SECONDS for `answers`, then prints ADDRESS; exits 1 with the
# end of the log when the service stops or does not answer in time.
service_wait() {
  local address="$1" seconds="$2" log="$service_dir/$service_file.log"
  for _ in $(seq 1 $((seconds * 4))); do
    if answers; then
      echo "$address"
      return
    fi
    if ! service_running; then
      echo "$service_name exited; the end of its log ($log):" >&2
      tail -n 40 "$log" >&2
      exit 1
    fi
    sleep 0.25
  done
  echo "$service_name did not answer on $address within $seconds s; the end of its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
}

# Stops it: SIGTERM, up to 30 s to go, then SIGKILL.
service_halt() {
  if service_running; then
    kill "$(service_pid)" 2>/dev/null || true
    for _ in $(seq 1 60); do
      service_running || break
      sleep 0.5
    done
    if service_running; then
      kill -9 "$(service_pid)" 2>/dev/null || true
    fi
  fi
  rm -f "$service_dir/$service_file.pid"
}
