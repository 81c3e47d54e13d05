"""The all-in-one process killed with SIGKILL while clients write: every write it had
acknowledged is there after a restart, reaches the graph, and the pipeline drains."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import ServerProcess
from tests.faults.conftest import (
    AUTH,
    TENANT,
    PrivateGraph,
    distinct_text,
    drained,
    fault_env,
    stored_ids,
)
from tests.redis_server import PrivateRedis

pytestmark = pytest.mark.faults

WRITERS = 3
KILL_AFTER = 40  # acknowledged writes before the kill


async def _writer(
    c: httpx.AsyncClient, k: int, acked: dict[str, str], enough: asyncio.Event
) -> int:
    """Writes until the server goes away; returns how many requests failed in transit
    (their outcome unknown to the client: not acknowledged)."""
    lost_in_transit = 0
    n = 0
    while True:
        n += 1
        text = distinct_text(k * 10_000 + n)
        try:
            r = await c.post(
                "/v1/memories", json={"text": text}, headers={"Idempotency-Key": uuid.uuid4().hex}
            )
        except httpx.TransportError:
            return lost_in_transit + 1
        assert r.status_code == 201, r.text
        assert r.json()["status"] == "created", r.text
        acked[r.json()["id"]] = text
        if len(acked) >= KILL_AFTER:
            enough.set()


async def test_kill_mid_ingest_keeps_every_acknowledged_write(
    tmp_path: Path, redis: PrivateRedis, graph: PrivateGraph
) -> None:
    server = ServerProcess(
        fault_env(tmp_path, redis.url, graph.uri), output=tmp_path / "server.log"
    )
    url = await server.start()
    acked: dict[str, str] = {}
    enough = asyncio.Event()
    try:
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as c:
            writers = [asyncio.create_task(_writer(c, k, acked, enough)) for k in range(WRITERS)]
            await asyncio.wait_for(enough.wait(), 120)
            await server.kill()
            await asyncio.gather(*writers)
        assert len(acked) >= KILL_AFTER
        await server.start()
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as c:
            stored = await stored_ids(c)
            missing = set(acked) - stored
            assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost"
            for memory_id, text in list(acked.items())[:: max(1, len(acked) // 5)]:
                r = await c.post("/v1/recall", json={"query": text, "k": 10})
                assert r.status_code == 200, r.text
                ids = [i["memory_id"] for i in r.json()["situational_context"]]
                assert memory_id in ids, f"{memory_id} not recalled by its own text"
            await drained(c, within_s=90)
        store = graph.store()
        try:
            in_graph = await store.existing_memories(TENANT, list(acked))
        finally:
            await store.close()
        assert set(acked) <= in_graph, f"{len(set(acked) - in_graph)} not in the graph"
    finally:
        await server.stop()
