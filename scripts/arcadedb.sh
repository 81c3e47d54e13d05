#!/usr/bin/env bash
# Embedded Bolt graph server (ArcadeDB via arcadedb-embedded) for the embedded default.
#   scripts/arcadedb.sh start|stop|status|restart
# Env: PCM_ARCADE_PORT (7688), PCM_GRAPH_PASSWORD / NEO4J_PASSWORD (pcm-dev-password),
# PCM_ARCADE_VAR (var/arcadedb), PCM_ARCADE_HEAP (512m), PCM_ARCADE_START_TIMEOUT (90 s).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VAR="${PCM_ARCADE_VAR:-$ROOT/var/arcadedb}"
PIDFILE="$VAR/arcadedb.pid"
LOG="$VAR/arcadedb.log"
PORT="${PCM_ARCADE_PORT:-7688}"
export PCM_GRAPH_PASSWORD="${PCM_GRAPH_PASSWORD:-${NEO4J_PASSWORD:-pcm-dev-password}}"
TIMEOUT="${PCM_ARCADE_START_TIMEOUT:-90}"

if [[ -x "$ROOT/.venv/bin/python" ]]; then PY=("$ROOT/.venv/bin/python"); else PY=(uv run --project "$ROOT" python); fi

running() { [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

bolt_ok() {
  "${PY[@]}" - "$PORT" <<'PY'
import asyncio, os, sys
from neo4j import AsyncGraphDatabase
async def main() -> None:
    uri = f"bolt://127.0.0.1:{sys.argv[1]}"
    auth = ("neo4j", os.environ["PCM_GRAPH_PASSWORD"])
    async with AsyncGraphDatabase.driver(uri, auth=auth, connection_timeout=3) as d:
        records, _, _ = await d.execute_query("RETURN 1 AS n")
        assert records[0]["n"] == 1
asyncio.run(main())
PY
}

start() {
  if running; then echo "arcadedb already running (pid $(cat "$PIDFILE"), bolt port $PORT)"; return 0; fi
  if port_open; then echo "port $PORT is in use by another process" >&2; exit 1; fi
  mkdir -p "$VAR"
  local t0=$SECONDS
  # Run from $VAR: the engine writes its ./log there. setsid: outlives this shell.
  (cd "$VAR" && exec setsid "${PY[@]}" -m pcm_common.stores.arcade_server \
      --port "$PORT" --data "$VAR/data" >"$LOG" 2>&1 < /dev/null) &
  echo $! >"$PIDFILE"
  until port_open; do
    if ! running; then echo "arcadedb exited during start; see $LOG:" >&2; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1; fi
    if (( SECONDS - t0 > TIMEOUT )); then echo "arcadedb did not open port $PORT in ${TIMEOUT}s; see $LOG" >&2; stop; exit 1; fi
    sleep 0.3
  done
  until bolt_ok 2>/dev/null; do
    if (( SECONDS - t0 > TIMEOUT )); then echo "arcadedb Bolt did not answer in ${TIMEOUT}s; see $LOG" >&2; stop; exit 1; fi
    sleep 0.3
  done
  echo "arcadedb started: bolt://127.0.0.1:$PORT (pid $(cat "$PIDFILE"), $((SECONDS - t0)) s, log $LOG)"
}

stop() {
  if ! running; then echo "arcadedb not running"; rm -f "$PIDFILE"; return 0; fi
  local pid; pid="$(cat "$PIDFILE")"
  kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then echo "arcadedb did not stop in 30 s; killing" >&2; kill -KILL "$pid"; fi
  rm -f "$PIDFILE"
  echo "arcadedb stopped"
}

status() {
  if running; then
    if bolt_ok 2>/dev/null; then echo "arcadedb running (pid $(cat "$PIDFILE")), bolt://127.0.0.1:$PORT answers"; return 0; fi
    echo "arcadedb process $(cat "$PIDFILE") alive but Bolt on port $PORT does not answer"; return 1
  fi
  echo "arcadedb not running"; return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart) stop; start ;;
  *) echo "usage: $0 start|stop|status|restart" >&2; exit 2 ;;
esac
