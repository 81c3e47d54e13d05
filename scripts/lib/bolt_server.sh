# Shared lifecycle of a local Bolt graph server (Neo4j, ArcadeDB), sourced by the scripts
# that start one. The caller sets NAME, ROOT, VAR, PIDFILE, LOG, PORT, TIMEOUT and
# BOLT_PASSWORD, and defines `launch` (starts the server in the background, from this
# shell, so that $! is its pid).

py() {
  if [[ -x "$ROOT/.venv/bin/python" ]]; then "$ROOT/.venv/bin/python" "$@"; else uv run --project "$ROOT" python "$@"; fi
}

running() { [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

bolt_ok() {
  # A real round trip (handshake, auth, query), not just an open port.
  BOLT_PASSWORD="$BOLT_PASSWORD" py - "$PORT" <<'PY'
import asyncio, os, sys
from neo4j import AsyncGraphDatabase
async def main() -> None:
    uri = f"bolt://127.0.0.1:{sys.argv[1]}"
    auth = ("neo4j", os.environ["BOLT_PASSWORD"])
    async with AsyncGraphDatabase.driver(uri, auth=auth, connection_timeout=3) as d:
        records, _, _ = await d.execute_query("RETURN 1 AS n")
        assert records[0]["n"] == 1
asyncio.run(main())
PY
}

start() {
  if running; then echo "$NAME already running (pid $(cat "$PIDFILE"), bolt port $PORT)"; return 0; fi
  if port_open; then echo "port $PORT is in use by another process" >&2; exit 1; fi
  mkdir -p "$VAR"
  local t0=$SECONDS
  launch
  echo $! >"$PIDFILE"
  until port_open; do
    if ! running; then echo "$NAME exited during start; see $LOG:" >&2; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1; fi
    if (( SECONDS - t0 > TIMEOUT )); then echo "$NAME did not open port $PORT in ${TIMEOUT}s; see $LOG" >&2; stop; exit 1; fi
    sleep 0.3
  done
  until bolt_ok 2>/dev/null; do
    if (( SECONDS - t0 > TIMEOUT )); then
      echo "$NAME Bolt did not answer in ${TIMEOUT}s; see $LOG. The check's own error:" >&2
      # The check needs the project's Python (neo4j driver): `make install` first.
      bolt_ok 2>&1 | tail -3 >&2 || true  # it fails here by definition (set -e would exit)
      stop; exit 1
    fi
    sleep 0.3
  done
  echo "$NAME started: bolt://127.0.0.1:$PORT (pid $(cat "$PIDFILE"), $((SECONDS - t0)) s, log $LOG)"
}

stop() {
  if ! running; then echo "$NAME not running"; rm -f "$PIDFILE"; return 0; fi
  local pid; pid="$(cat "$PIDFILE")"
  kill -TERM "$pid"
  # Both servers checkpoint their store on SIGTERM; give them time before SIGKILL.
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then echo "$NAME did not stop in 30 s; killing" >&2; kill -KILL "$pid"; fi
  rm -f "$PIDFILE"
  echo "$NAME stopped"
}

status() {
  if running; then
    if bolt_ok 2>/dev/null; then echo "$NAME running (pid $(cat "$PIDFILE")), bolt://127.0.0.1:$PORT answers"; return 0; fi
    echo "$NAME process $(cat "$PIDFILE") alive but Bolt on port $PORT does not answer"; return 1
  fi
  echo "$NAME not running"; return 3
}
