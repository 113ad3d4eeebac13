#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft) on 127.0.0.1, for roundup's
# scale-out tests.
#
#   scripts/kafka-broker.sh start     fetch the broker (once), start it, wait
#                                     until it answers, print its address
#   scripts/kafka-broker.sh stop      stop it (and forget its data)
#   scripts/kafka-broker.sh restart   stop and start, keeping its data
#   scripts/kafka-broker.sh status    print its address if it runs
#
# The broker's jars come from Maven Central (scripts/kafka/pom.xml) into a
# cache that survives clones ($ROUNDUP_KAFKA_CACHE, default
# ~/.cache/roundup-kafka): a second run downloads nothing. Java 17 and
# Maven are needed. `start` is idempotent: a broker already answering is
# left as it is. Environment: ROUNDUP_KAFKA_PORT (9092),
# ROUNDUP_KAFKA_DIR (the broker's data and log, default
# ${TMPDIR:-/tmp}/roundup-kafka-$PORT), KAFKA_JAVA_OPTS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${ROUNDUP_KAFKA_PORT:-9092}"
controller_port=$((port + 1))
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/kafka/pom.xml")"
cache="${ROUNDUP_KAFKA_CACHE:-$HOME/.cache/roundup-kafka}/$version"
dir="${ROUNDUP_KAFKA_DIR:-${TMPDIR:-/tmp}/roundup-kafka-$port}"
java_opts="${KAFKA_JAVA_OPTS:--Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true}"

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
# shellcheck source=scripts/service.sh
. "$here/service.sh"
service_name="the broker"
service_dir="$dir"
service_file="kafka"

fetch() {
  if [ -f "$cache/complete" ]; then
    return
  fi
  echo "fetching Apache Kafka $version from Maven Central into $cache" >&2
  rm -rf "$cache"
  mkdir -p "$cache"
  mvn -q -B -f "$here/kafka/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$cache/lib" -DincludeScope=runtime >&2
  ls "$cache/lib" | grep -q "^kafka_2.13-$version.jar$" || {
    echo "the fetched classpath has no kafka_2.13-$version.jar" >&2
    exit 1
  }
  touch "$cache/complete"
}

start() {
  keep_data="${1:-}"
  if answers; then
    echo "127.0.0.1:$port"
    return
  fi
  fetch
  mkdir -p "$dir"
  if [ -z "$keep_data" ] || [ ! -d "$dir/data" ]; then
    rm -rf "$dir/data"
    mkdir -p "$dir/data"
    sed -e "s#@DATA_DIR@#$dir/data#" -e "s#@PORT@#$port#g" -e "s#@CONTROLLER_PORT@#$controller_port#g" \
      "$here/kafka/server.properties" >"$dir/server.properties"
    cluster="$(java -cp "$cache/lib/*" kafka.tools.StorageTool random-uuid 2>/dev/null)"
    java -cp "$cache/lib/*" kafka.tools.StorageTool format -t "$cluster" -c "$dir/server.properties" >"$dir/format.log" 2>&1 || {
      cat "$dir/format.log" >&2
      exit 1
    }
  fi
  # shellcheck disable=SC2086
  service_launch java $java_opts -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
    -cp "$cache/lib/*" kafka.Kafka "$dir/server.properties"
  service_wait "127.0.0.1:$port" 60
}

case "${1:-}" in
start) start ;;
stop)
  service_halt
  rm -rf "$dir"
  ;;
restart)
  service_halt
  start keep-data
  ;;
status)
  if answers; then echo "127.0.0.1:$port"; else
    echo "no broker on 127.0.0.1:$port" >&2
    exit 1
  fi
  ;;
fetch) fetch ;;
*)
  echo "usage: $0 start|stop|restart|status|fetch" >&2
  exit 64
  ;;
esac
