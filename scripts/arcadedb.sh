#!/usr/bin/env bash
# Embedded Bolt graph server (ArcadeDB via arcadedb-embedded) for the embedded default.
#   scripts/arcadedb.sh start|stop|status|restart
# Env: PCM_ARCADE_PORT (7688), PCM_GRAPH_PASSWORD / NEO4J_PASSWORD (pcm-dev-password),
# PCM_ARCADE_VAR (var/arcadedb), PCM_ARCADE_HEAP (512m), PCM_ARCADE_START_TIMEOUT (90 s).
set -euo pipefail

NAME=arcadedb
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VAR="${PCM_ARCADE_VAR:-$ROOT/var/arcadedb}"
PIDFILE="$VAR/arcadedb.pid"
LOG="$VAR/arcadedb.log"
PORT="${PCM_ARCADE_PORT:-7688}"
export PCM_GRAPH_PASSWORD="${PCM_GRAPH_PASSWORD:-${NEO4J_PASSWORD:-pcm-dev-password}}"
BOLT_PASSWORD="$PCM_GRAPH_PASSWORD"
TIMEOUT="${PCM_ARCADE_START_TIMEOUT:-90}"
# shellcheck source=lib/bolt_server.sh
source "$ROOT/scripts/lib/bolt_server.sh"

launch() {
  # Run from $VAR: the engine writes its ./log there. setsid: outlives this shell.
  (cd "$VAR" && exec setsid "$(py_bin)" -m pcm_common.stores.graph.arcade_server \
      --port "$PORT" --data "$VAR/data" >"$LOG" 2>&1 < /dev/null) &
}

py_bin() {
  if [[ -x "$ROOT/.venv/bin/python" ]]; then echo "$ROOT/.venv/bin/python"; else (cd "$ROOT" && uv run python -c 'import sys; print(sys.executable)'); fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart) stop; start ;;
  *) echo "usage: $0 start|stop|status|restart" >&2; exit 2 ;;
esac
