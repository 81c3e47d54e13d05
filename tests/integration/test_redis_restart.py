"""Issue 33, A and B: Redis restarted while 2,000 memories are being written through a real
server. Every acknowledged write is kept, reaches the graph, and `/v1/pipeline` drains to 0
(it reported `pending: 3414` for good when Redis's lag came back null after the restart).
Through pcm-client, without its own retries: the test retries each batch itself, with the
same Idempotency-Key, to count the writes that met the restart."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest

from pcm_cli.testing import server_process
from pcm_client import NO_RETRY, AsyncPcmClient, Conflict, TransportError, Unavailable
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from tests.conftest import KEYS, NEO4J_URI, service_env
from tests.redis_server import PrivateRedis, private_redis

pytestmark = pytest.mark.slow

MEMORIES = 2000
BATCH = 20
WRITERS = 4
PEOPLE = ("Alice", "Bruno", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana")
CITIES = ("Berlin", "Lisbon", "Oslo", "Madrid", "Vienna", "Prague", "Dublin", "Turin")


def _text(n: int) -> str:
    who, other = PEOPLE[n % 8], PEOPLE[(n // 8) % 8]
    return f"Note {n}: {who} met {other} in {CITIES[(n // 64) % 8]} about order {n * 7 + 3}."


async def _store(c: AsyncPcmClient, start: int, acked: dict[int, str], half: asyncio.Event) -> int:
    """One batch, retried with the same Idempotency-Key until it is stored; returns how many
    tries it took."""
    batch = [{"text": _text(n)} for n in range(start, start + BATCH)]
    key = uuid.uuid4().hex
    for tries in range(1, 200):
        try:
            out = await c.store_batch(batch, idempotency_key=key)
        except (TransportError, Unavailable, Conflict):
            # Redis away (503), the first try still in progress (409), no answer.
            await asyncio.sleep(0.5)
            continue
        for n, result in enumerate(out.results):
            assert result.status == "created", (tries, result)
            acked[start + n] = str(result.id)
        if len(acked) >= MEMORIES // 2:
            half.set()
        return tries
    raise AssertionError(f"batch {start} never stored")


async def _restart_when(redis: PrivateRedis, half: asyncio.Event) -> float:
    await half.wait()
    await redis.restart(down_s=1.0)
    return time.monotonic()


async def _graph_has(tenant: str, ids: list[str], within_s: float) -> float:
    """Seconds until every id has its memory node in the graph."""
    graph = Neo4jGraphStore(
        NEO4J_URI, "neo4j", os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
    )
    started = time.monotonic()
    try:
        while True:
            missing = set(ids) - await graph.existing_memories(tenant, ids)
            waited = time.monotonic() - started
            if not missing:
                return waited
            assert waited < within_s, f"{len(missing)} acknowledged writes not in the graph"
            await asyncio.sleep(1.0)
    finally:
        await graph.close()


async def _drained(c: AsyncPcmClient, within_s: float) -> float:
    started = time.monotonic()
    while True:
        status = await c.pipeline()
        waited = time.monotonic() - started
        if status["pending"] == 0:
            return waited
        assert waited < within_s, f"pipeline did not drain: {status}"
        await asyncio.sleep(0.5)


async def test_writes_survive_a_redis_restart_and_the_pipeline_drains(tmp_path: Path) -> None:
    async with private_redis(tmp_path / "redis") as redis:
        env = {**service_env(tmp_path, redis.url), "PCM_LOG_LEVEL": "ERROR"}
        async with server_process(env) as url:
            async with AsyncPcmClient(url, "key-a", timeout=60, retry=NO_RETRY) as c:
                acked: dict[int, str] = {}
                half = asyncio.Event()
                starts = list(range(0, MEMORIES, BATCH))

                async def writer(k: int) -> list[int]:
                    return [await _store(c, s, acked, half) for s in starts[k::WRITERS]]

                restart = asyncio.create_task(_restart_when(redis, half))
                tries = await asyncio.gather(*(writer(k) for k in range(WRITERS)))
                await restart
                written = time.monotonic()
                assert sum(t > 1 for ts in tries for t in ts) >= 1, "no write met the restart"

                ids = list(acked.values())
                assert len(set(ids)) == MEMORIES
                stored = {m["id"] async for m in c.iter_memories(page_size=500)}
                assert stored == set(ids), "acknowledged writes lost"

                in_graph = await _graph_has(KEYS["key-a"], ids, within_s=60)
                # The pipeline is done once the graph has everything; /v1/pipeline says so.
                drained = await _drained(c, within_s=30)
                print(
                    f"graph complete {in_graph:.1f} s after the last write "
                    f"({time.monotonic() - written:.1f}); pipeline 0 after {drained:.1f} s"
                )
