#!/usr/bin/env bash
# Arize Phoenix, an OpenTelemetry tracing backend, on 127.0.0.1: what
# roundup's `--emit otlp` traces are exported to and read back from in CI.
#
#   scripts/phoenix.sh start     install Phoenix (once), start it, wait until
#                                it answers, print its URL
#   scripts/phoenix.sh stop      stop it (and forget its traces)
#   scripts/phoenix.sh status    print its URL if it runs
#
# Phoenix comes from PyPI (scripts/phoenix/requirements.txt) into a virtual
# environment that survives clones ($ROUNDUP_PHOENIX_CACHE, default
# ~/.cache/roundup-phoenix): a second run installs nothing. Python 3.10 or
# newer with venv is needed. `start` is idempotent: a Phoenix already
# answering is left as it is. It keeps its traces in SQLite under
# ROUNDUP_PHOENIX_DIR (default ${TMPDIR:-/tmp}/roundup-phoenix-$PORT).
# Environment: ROUNDUP_PHOENIX_PORT (HTTP: UI, query API and OTLP/HTTP
# /v1/traces; 6006), ROUNDUP_PHOENIX_GRPC_PORT (OTLP/gRPC; 4317).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${ROUNDUP_PHOENIX_PORT:-6006}"
grpc_port="${ROUNDUP_PHOENIX_GRPC_PORT:-4317}"
requirements="$here/phoenix/requirements.txt"
version="$(sed -n 's/^arize-phoenix==//p' "$requirements")"
venv="${ROUNDUP_PHOENIX_CACHE:-$HOME/.cache/roundup-phoenix}/venv-$version"
dir="${ROUNDUP_PHOENIX_DIR:-${TMPDIR:-/tmp}/roundup-phoenix-$port}"
url="http://127.0.0.1:$port"

answers() { python3 - "$url/healthz" <<'PY' 2>/dev/null
import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
PY
}
# shellcheck source=scripts/service.sh
. "$here/service.sh"
service_name="Phoenix"
service_dir="$dir"
service_file="phoenix"

install() {
  if [ -f "$venv/complete" ]; then
    return
  fi
  echo "installing Arize Phoenix $version from PyPI into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  touch "$venv/complete"
}

start() {
  if answers; then
    echo "$url"
    return
  fi
  install
  rm -rf "$dir"
  mkdir -p "$dir"
  PHOENIX_WORKING_DIR="$dir" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT="$grpc_port" \
    PHOENIX_TELEMETRY_ENABLED=false service_launch "$venv/bin/phoenix" serve
  service_wait "$url" 120
}

case "${1:-}" in
start) start ;;
stop)
  service_halt
  rm -rf "$dir"
  ;;
status)
  if answers; then echo "$url"; else
    echo "no Phoenix on $url" >&2
    exit 1
  fi
  ;;
install) install ;;
*)
  echo "usage: $0 start|stop|status|install" >&2
  exit 64
  ;;
esac
