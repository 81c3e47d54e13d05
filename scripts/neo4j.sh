#!/usr/bin/env bash
# Real Neo4j 5.26 (embedded DBMS + Bolt) for dev and integration tests.
#   scripts/neo4j.sh start|stop|status|restart
# Env: NEO4J_BOLT_PORT (7687), NEO4J_PASSWORD (pcm-dev-password), NEO4J_AUTH=none to
# disable auth, PCM_NEO4J_VAR (var/neo4j), NEO4J_HEAP (512m), NEO4J_START_TIMEOUT (90 s).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAUNCHER="$ROOT/deploy/neo4j-launcher"
JAR="$LAUNCHER/target/neo4j-launcher.jar"
VAR="${PCM_NEO4J_VAR:-$ROOT/var/neo4j}"
PIDFILE="$VAR/neo4j.pid"
LOG="$VAR/neo4j.log"
PORT="${NEO4J_BOLT_PORT:-7687}"
export NEO4J_PASSWORD="${NEO4J_PASSWORD:-pcm-dev-password}"
TIMEOUT="${NEO4J_START_TIMEOUT:-90}"

py() {
  if [[ -x "$ROOT/.venv/bin/python" ]]; then "$ROOT/.venv/bin/python" "$@"; else (cd "$ROOT" && uv run python "$@"); fi
}

running() { [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

bolt_ok() {
  # A real round trip (handshake, auth, query), not just an open port.
  py - "$PORT" <<'PY'
import asyncio, os, sys
from neo4j import AsyncGraphDatabase
async def main() -> None:
    uri = f"bolt://127.0.0.1:{sys.argv[1]}"
    auth = ("neo4j", os.environ["NEO4J_PASSWORD"])
    async with AsyncGraphDatabase.driver(uri, auth=auth, connection_timeout=3) as d:
        records, _, _ = await d.execute_query("RETURN 1 AS n")
        assert records[0]["n"] == 1
asyncio.run(main())
PY
}

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

start() {
  if running; then echo "neo4j already running (pid $(cat "$PIDFILE"), bolt port $PORT)"; return 0; fi
  if port_open; then echo "port $PORT is in use by another process" >&2; exit 1; fi
  command -v java >/dev/null || { echo "java not found (need Java 17+)" >&2; exit 1; }
  build
  mkdir -p "$VAR"
  local t0=$SECONDS
  # setsid: the server outlives this shell and a Ctrl-C in it.
  setsid java "-Xmx${NEO4J_HEAP:-512m}" -XX:+UseSerialGC -jar "$JAR" \
    --port "$PORT" --data "$VAR/data" >"$LOG" 2>&1 < /dev/null &
  echo $! >"$PIDFILE"
  until port_open; do
    if ! running; then echo "neo4j exited during start; see $LOG:" >&2; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1; fi
    if (( SECONDS - t0 > TIMEOUT )); then echo "neo4j did not open port $PORT in ${TIMEOUT}s; see $LOG" >&2; stop; exit 1; fi
    sleep 0.5
  done
  until bolt_ok 2>/dev/null; do
    if (( SECONDS - t0 > TIMEOUT )); then echo "neo4j Bolt did not answer in ${TIMEOUT}s; see $LOG" >&2; stop; exit 1; fi
    sleep 0.5
  done
  echo "neo4j started: bolt://127.0.0.1:$PORT (pid $(cat "$PIDFILE"), $((SECONDS - t0)) s, log $LOG)"
}

stop() {
  if ! running; then echo "neo4j not running"; rm -f "$PIDFILE"; return 0; fi
  local pid; pid="$(cat "$PIDFILE")"
  kill -TERM "$pid"
  # The launcher's shutdown hook checkpoints the store; give it time before SIGKILL.
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then echo "neo4j did not stop in 30 s; killing" >&2; kill -KILL "$pid"; fi
  rm -f "$PIDFILE"
  echo "neo4j stopped"
}

status() {
  if running; then
    if bolt_ok 2>/dev/null; then echo "neo4j running (pid $(cat "$PIDFILE")), bolt://127.0.0.1:$PORT answers"; return 0; fi
    echo "neo4j process $(cat "$PIDFILE") alive but Bolt on port $PORT does not answer"; return 1
  fi
  echo "neo4j not running"; return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart) stop; start ;;
  build) build ;;
  *) echo "usage: $0 start|stop|status|restart|build" >&2; exit 2 ;;
esac
