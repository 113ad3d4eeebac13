#!/usr/bin/env bash
# Jaeger (v2, all in one: OTLP receivers, in-memory storage, query API) on
# 127.0.0.1: the second tracing backend that roundup's `--emit otlp` traces
# are exported to and read back from in CI.
#
#   scripts/jaeger.sh start     build Jaeger (once), start it, wait until it
#                               is healthy, print its query API's URL
#   scripts/jaeger.sh stop      stop it (its traces are in memory: gone)
#   scripts/jaeger.sh status    print the query API's URL if it runs
#   scripts/jaeger.sh build     only build it
#
# Jaeger is a Go program: it is built from the Go module proxy with the
# module in scripts/jaeger/ (go.mod and go.sum pin v1.76.0 and every
# dependency) into a cache that survives clones ($ROUNDUP_JAEGER_CACHE,
# default ~/.cache/roundup-jaeger): the first build takes minutes, later
# ones nothing. Go is needed. It listens on its default ports: OTLP/gRPC
# 4317, OTLP/HTTP 4318 (where traces are sent), the query API and UI 16686,
# health 13133; its log is in ROUNDUP_JAEGER_DIR (default
# ${TMPDIR:-/tmp}/roundup-jaeger). A build from source has no UI (the
# query API answers; the page says the UI was not built in).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's/^\tgithub.com\/jaegertracing\/jaeger \(v[^ ]*\).*/\1/p' "$here/jaeger/go.mod")"
cache="${ROUNDUP_JAEGER_CACHE:-$HOME/.cache/roundup-jaeger}/$version"
dir="${ROUNDUP_JAEGER_DIR:-${TMPDIR:-/tmp}/roundup-jaeger}"
url="http://127.0.0.1:16686"

answers() { python3 - <<'PY' 2>/dev/null
import json, sys, urllib.request
sys.exit(0 if json.load(urllib.request.urlopen("http://127.0.0.1:13133/status", timeout=2)).get("healthy") else 1)
PY
}
# shellcheck source=scripts/service.sh
. "$here/service.sh"
service_name="Jaeger"
service_dir="$dir"
service_file="jaeger"

build() {
  if [ -x "$cache/jaeger" ]; then
    return
  fi
  echo "building Jaeger $version from the Go module proxy into $cache (minutes, once)" >&2
  mkdir -p "$cache"
  (cd "$here/jaeger" && go build -o "$cache/jaeger.partial" github.com/jaegertracing/jaeger/cmd/jaeger) >&2
  mv "$cache/jaeger.partial" "$cache/jaeger"
}

start() {
  if answers; then
    echo "$url"
    return
  fi
  build
  service_launch "$cache/jaeger"
  service_wait "$url" 60
}

case "${1:-}" in
start) start ;;
stop)
  service_halt
  rm -rf "$dir"
  ;;
status)
  if answers; then echo "$url"; else
    echo "no Jaeger on $url" >&2
    exit 1
  fi
  ;;
build) build ;;
*)
  echo "usage: $0 start|stop|status|build" >&2
  exit 64
  ;;
esac
