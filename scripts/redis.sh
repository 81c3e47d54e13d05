#!/usr/bin/env bash
# Start/stop a local Redis for development and tests. Append-only file with fsync on every
# write: an acknowledged write survives a restarted Redis.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PCM_REDIS_PORT:-6379}"
DIR="var/redis-$PORT"
PIDFILE="$DIR/redis.pid"

ensure_installed() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server not found; installing Debian's redis-server" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq redis-server >/dev/null
  fi
}

case "${1:-start}" in
  start)
    ensure_installed
    mkdir -p "$DIR"
    if redis-cli -p "$PORT" ping >/dev/null 2>&1; then echo "redis already up on :$PORT"; exit 0; fi
    redis-server --port "$PORT" --bind 127.0.0.1 --dir "$PWD/$DIR" --daemonize yes \
      --pidfile "$PWD/$PIDFILE" --logfile "$PWD/$DIR/redis.log" \
      --appendonly yes --appendfsync always --save "" >/dev/null
    for _ in $(seq 1 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$PORT" ping >/dev/null && echo "redis up on :$PORT"
    ;;
  stop)
    redis-cli -p "$PORT" shutdown >/dev/null 2>&1 || true
    echo "redis stopped"
    ;;
  status)
    redis-cli -p "$PORT" ping
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
