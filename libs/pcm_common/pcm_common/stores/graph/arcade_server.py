"""Embedded Bolt graph server for the embedded default (DESIGN §1).

Runs ArcadeDB in-process (``arcadedb-embedded``: the engine plus a bundled JRE, driven
through JPype) with its Bolt protocol plugin, so the official ``neo4j`` driver and the same
``Neo4jGraphStore`` adapter work against it unchanged. Nothing to install by hand.

    python -m pcm_common.stores.graph.arcade_server --port 7688 --data var/arcadedb

The server listens on 127.0.0.1 only. Bolt authenticates against ArcadeDB's server users,
so a user named like the Neo4j default (``neo4j``) is created with the configured password;
the driver's default credentials then work on both backends.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("pcm.arcade_server")

BOLT_PLUGIN = "Bolt:com.arcadedb.bolt.BoltProtocolPlugin"


@dataclass(frozen=True)
class ArcadeSettings:
    data_dir: str = "var/arcadedb"
    host: str = "127.0.0.1"
    bolt_port: int = 7688
    # ArcadeDB always serves HTTP too; a range lets it pick a free port instead of failing
    # when another instance (tests, a second checkout) holds 2480.
    http_port: str = "2480-2499"
    database: str = "pcm"
    user: str = "neo4j"
    password: str = "pcm-dev-password"
    heap: str = "512m"


class ArcadeBoltServer:
    """One ArcadeDB server with Bolt enabled; start() / stop() are idempotent."""

    def __init__(self, settings: ArcadeSettings) -> None:
        self.settings = settings
        self._server: Any = None

    def start(self) -> None:
        if self._server is not None:
            return
        s = self.settings
        root = Path(s.data_dir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        # The engine writes ./log relative to the working directory; keep it with the data.
        os.environ.setdefault("ARCADEDB_JVM_ERROR_FILE", str(root / "log" / "hs_err_pid%p.log"))
        # Imported here: importing the package is cheap, but it must not be a hard import
        # for processes that talk to a real Neo4j and never start a JVM.
        from arcadedb_embedded import jvm
        from arcadedb_embedded.server import ArcadeDBServer

        jvm.start_jvm(heap_size=s.heap)
        server = ArcadeDBServer(
            str(root),
            root_password=s.password,
            config={
                "host": s.host,
                "http_port": s.http_port,
                "server_plugins": BOLT_PLUGIN,
                "bolt_port": s.bolt_port,
                "bolt_host": s.host,
                # A driver session without a database name lands here.
                "bolt_defaultDatabase": s.database,
            },
        )
        server.start()
        try:
            server.create_database(s.database)  # get-or-create
            self._ensure_user(server)
        except BaseException:
            server.stop()
            raise
        self._server = server
        log.info("arcadedb bolt://%s:%d database=%s", s.host, s.bolt_port, s.database)

    def _ensure_user(self, server: Any) -> None:
        """Create (or re-password) the Bolt user; root already has the same password."""
        s = self.settings
        if s.user == "root":
            return
        security = server._java_server.getSecurity()
        if security.existsUser(s.user):
            security.setUserPassword(s.user, s.password)
        else:
            # createUser(name, password) grants admin on every database ("*").
            security.createUser(s.user, s.password)

    def stop(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        server.stop()


def _parse(argv: list[str] | None) -> ArcadeSettings:
    env = os.environ
    d = ArcadeSettings()
    p = argparse.ArgumentParser(prog="python -m pcm_common.stores.graph.arcade_server")
    p.add_argument("--data", default=env.get("PCM_ARCADE_DATA", d.data_dir))
    p.add_argument("--host", default=env.get("PCM_ARCADE_HOST", d.host))
    p.add_argument("--port", type=int, default=int(env.get("PCM_ARCADE_PORT", d.bolt_port)))
    p.add_argument("--http-port", default=env.get("PCM_ARCADE_HTTP_PORT", d.http_port))
    p.add_argument("--database", default=env.get("PCM_ARCADE_DATABASE", d.database))
    p.add_argument("--user", default=env.get("PCM_GRAPH_USER", d.user))
    p.add_argument("--heap", default=env.get("PCM_ARCADE_HEAP", d.heap))
    a = p.parse_args(argv)
    # The password comes from the environment only, so it never shows in `ps`.
    password = env.get("PCM_GRAPH_PASSWORD") or env.get("NEO4J_PASSWORD") or d.password
    return ArcadeSettings(
        data_dir=a.data,
        host=a.host,
        bolt_port=a.port,
        http_port=str(a.http_port),
        database=a.database,
        user=a.user,
        password=password,
        heap=a.heap,
    )


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    settings = _parse(argv)
    server = ArcadeBoltServer(settings)
    stop = threading.Event()

    def _on_signal(signum: int, _frame: object) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    server.start()
    # Installed after the JVM is up: the JVM puts its own SIGTERM handler in place, which
    # exits at once; ours lets the loop below stop the engine (flushing the database).
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    print(
        f"arcade_server: bolt://{settings.host}:{settings.bolt_port} ready "
        f"(database={settings.database}, data={settings.data_dir})",
        flush=True,
    )
    try:
        while not stop.wait(1.0):
            pass
    finally:
        server.stop()
        print("arcade_server: stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
