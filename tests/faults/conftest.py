"""The fault suite's servers (`make test-faults`): each case gets a Redis of its own on a
free port (it is restarted), a Qdrant Edge shard of its own, and a graph server the suite
starts (a private ArcadeDB, as `scripts/arcadedb.sh` runs one): the shared Neo4j and
ArcadeDB are never stopped."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pcm_cli.testing import free_port
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from tests.conftest import KEYS, service_env
from tests.redis_server import PrivateRedis, private_redis

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pcm-dev-password"
TENANT = KEYS["key-a"]
AUTH = {"Authorization": "Bearer key-a"}


class PrivateGraph:
    """An ArcadeDB Bolt server of the suite's own, started and stopped by
    `scripts/arcadedb.sh` with its own port and folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.uri = f"bolt://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "PCM_ARCADE_PORT": str(self.port),
            "PCM_ARCADE_VAR": str(folder),
            "PCM_GRAPH_PASSWORD": PASSWORD,
        }

    async def _script(self, action: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            str(ROOT / "scripts" / "arcadedb.sh"),
            action,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        assert proc.returncode == 0, out.decode()[-2000:]

    async def start(self) -> None:
        await self._script("start")

    async def stop(self) -> None:
        await self._script("stop")

    async def kill(self) -> None:
        """SIGKILL, as a crashed or lost graph node (a clean stop waits for its clients)."""
        pidfile = self.folder / "arcadedb.pid"
        pid = int(pidfile.read_text())
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.05)
        pidfile.unlink()

    def store(self) -> Neo4jGraphStore:
        return Neo4jGraphStore(self.uri, "neo4j", PASSWORD)


@pytest.fixture(autouse=True)
def _servers_installed() -> None:
    # A fault case that skipped for want of redis-server would pass CI having tested nothing.
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (scripts/redis.sh installs it)")


@pytest.fixture(scope="session")
async def graph(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[PrivateGraph]:
    server = PrivateGraph(tmp_path_factory.mktemp("arcadedb"))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[PrivateRedis]:
    async with private_redis(tmp_path / "redis") as server:
        yield server


def fault_env(tmp: Path, redis_url: str, graph_uri: str, **more: str) -> dict[str, str]:
    """A server's environment: its own Redis, graph and Qdrant folder; stale entries
    claimed after 1.5 s and owed events sent within 2 s, so that recovery is quick."""
    return {
        **service_env(tmp, redis_url),
        "NEO4J_URI": graph_uri,
        "NEO4J_PASSWORD": PASSWORD,
        "PCM_CLAIM_IDLE_MS": "1500",
        "PCM_OUTBOX_INTERVAL_S": "1",
        "PCM_OUTBOX_GRACE_S": "1",
        "PCM_LOG_LEVEL": "WARNING",
        "PCM_API_KEYS": json.dumps(KEYS),
        **more,
    }


PEOPLE = ("Olga", "Bruno", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jun")
CITIES = ("Tallinn", "Lisbon", "Oslo", "Madrid", "Vienna", "Prague", "Dublin", "Turin", "Riga")
THINGS = ("pianos", "bicycles", "lemons", "satellites", "violins", "tulips", "kayaks")


def distinct_text(n: int, tag: str = "") -> str:
    """A sentence unlike its neighbours (no near-duplicate merges between them), with
    people and places for the graph."""
    who, other = PEOPLE[n % 10], PEOPLE[(n // 10 + 3) % 10]
    return (
        f"{tag}{who} sold {n % 97 + 2} {THINGS[n % 7]} to {other} in {CITIES[(n // 7) % 9]} "
        f"for invoice {n * 7919 % 100003}."
    )


async def stored_ids(c: httpx.AsyncClient) -> set[str]:
    """Every memory id the tenant's listing pages through."""
    out: set[str] = set()
    offset: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"offset": offset} if offset else {})}
        r = await c.get("/v1/memories", params=params)
        assert r.status_code == 200, r.text
        page = r.json()
        out.update(m["id"] for m in page["items"])
        offset = page["next_offset"]
        if not offset:
            return out


async def drained(c: httpx.AsyncClient, within_s: float) -> None:
    """Until `/v1/pipeline` reports nothing pending."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        status = (await c.get("/v1/pipeline")).json()
        if status["pending"] == 0:
            return
        assert loop.time() < deadline, f"pipeline did not drain: {status}"
        await asyncio.sleep(0.3)
