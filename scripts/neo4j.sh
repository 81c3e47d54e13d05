#!/usr/bin/env bash
# Real Neo4j 5.26 (embedded DBMS + Bolt) for dev and integration tests.
#   scripts/neo4j.sh start|stop|status|restart|build
# Env: NEO4J_BOLT_PORT (7687), NEO4J_PASSWORD (pcm-dev-password), PCM_NEO4J_VAR
# (var/neo4j), NEO4J_HEAP (512m), NEO4J_START_TIMEOUT (90 s).
set -euo pipefail

NAME=neo4j
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAUNCHER="$ROOT/deploy/neo4j-launcher"
JAR="$LAUNCHER/target/neo4j-launcher.jar"
VAR="${PCM_NEO4J_VAR:-$ROOT/var/neo4j}"
PIDFILE="$VAR/neo4j.pid"
LOG="$VAR/neo4j.log"
PORT="${NEO4J_BOLT_PORT:-7687}"
export NEO4J_PASSWORD="${NEO4J_PASSWORD:-pcm-dev-password}"
BOLT_PASSWORD="$NEO4J_PASSWORD"
TIMEOUT="${NEO4J_START_TIMEOUT:-90}"
# shellcheck source=lib/bolt_server.sh
source "$ROOT/scripts/lib/bolt_server.sh"

build() {
  # Rebuild only when the jar is missing or older than the sources/pom.
  if [[ -f "$JAR" && -d "$LAUNCHER/target/lib" ]] \
     && [[ -z "$(find "$LAUNCHER/pom.xml" "$LAUNCHER/src" -newer "$JAR" -type f 2>/dev/null)" ]]; then
    return 0
  fi
  echo "building neo4j launcher (mvn package)..."
  local t0=$SECONDS
  (cd "$LAUNCHER" && mvn -q -B package -DskipTests) || { echo "mvn build failed" >&2; exit 1; }
  echo "built in $((SECONDS - t0)) s"
}

launch() {
  command -v java >/dev/null || { echo "java not found (need Java 17+)" >&2; exit 1; }
  build
  # setsid: the server outlives this shell and a Ctrl-C in it.
  setsid java "-Xmx${NEO4J_HEAP:-512m}" -XX:+UseSerialGC -jar "$JAR" \
    --port "$PORT" --data "$VAR/data" >"$LOG" 2>&1 < /dev/null &
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart) stop; start ;;
  build) build ;;
  *) echo "usage: $0 start|stop|status|restart|build" >&2; exit 2 ;;
esac
