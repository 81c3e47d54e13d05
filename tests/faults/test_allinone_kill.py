"""The all-in-one process killed with SIGKILL while clients write (its graph-extractor and
sweeper consumers holding batches): every write it had acknowledged is there after a
restart and is recalled, the pipeline drains, and each memory is extracted and judged,
its facts in the graph once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from pcm_cli.testing import ServerProcess
from pcm_common.messaging.events import PIPELINE_GROUPS
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


async def _pending(redis_url: str) -> dict[str, int]:
    """Entries each consumer group had not finished (unread or unacknowledged)."""
    client = Redis.from_url(redis_url)
    try:
        out: dict[str, int] = {}
        for stream, groups in PIPELINE_GROUPS.items():
            for g in await client.xinfo_groups(stream):
                name = g["name"].decode()
                if name in groups:
                    out[name] = int(g["lag"] or 0) + int(g["pending"])
        return out
    finally:
        await client.aclose()


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
        in_hand = await _pending(redis.url)
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
            for memory_id in acked:
                rec = (await c.get(f"/v1/memories/{memory_id}")).json()
                assert rec["graph"]["extracted"] is True, rec
                assert rec["surprisal"]["judged_at"], rec
        store = graph.store()
        try:
            in_graph = await store.existing_memories(TENANT, list(acked))
            assert set(acked) <= in_graph, f"{len(set(acked) - in_graph)} not in the graph"
            for memory_id in acked:
                keys = [e.key for e in await store.entities_of(TENANT, memory_id)]
                assert keys and len(keys) == len(set(keys)), (memory_id, keys)
        finally:
            await store.close()
        print(f"{len(acked)} acknowledged; entries in hand or unread at the kill: {in_hand}")
    finally:
        await server.stop()
