"""A graph-extractor replica (`pcm serve graph-extractor`, as its Deployment runs it) killed
with SIGKILL while it holds a batch: the next replica claims the dead one's pending entries,
and the graph ends with every memory once: facts counted, none missing, none doubled."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from pcm_cli.testing import ServerProcess
from pcm_common.domain.clock import utcnow
from pcm_common.messaging.bus import Bus, ensure_groups
from pcm_common.messaging.events import GROUP_GRAPH, STREAM_WRITTEN, MemoryWritten
from pcm_common.runtime.config import PcmSettings
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from tests.faults.conftest import PrivateGraph, distinct_text, fault_env
from tests.redis_server import PrivateRedis

pytestmark = pytest.mark.faults

N = 240
TENANT = "worker-kill"


async def _group(redis: Redis) -> tuple[int, int]:
    """(entries not yet read, entries read and not acknowledged) of the extractor's group."""
    for g in await redis.xinfo_groups(STREAM_WRITTEN):
        if g["name"].decode() == GROUP_GRAPH:
            return int(g["lag"] or 0), int(g["pending"])
    raise AssertionError("group missing")


async def _facts(store: Neo4jGraphStore, ids: list[str]) -> tuple[int, int]:
    """(mentions and relations listed memory by memory, duplicates among them)."""
    listed = doubled = 0
    for memory_id in ids:
        entities = [e.key for e in await store.entities_of(TENANT, memory_id)]
        relations = [
            (r.source.key, r.type, r.target.key)
            for r in await store.relations_of(TENANT, memory_id)
        ]
        listed += len(entities)
        doubled += len(entities) - len(set(entities)) + len(relations) - len(set(relations))
    return listed, doubled


async def test_sigkill_of_a_graph_extractor_mid_batch(
    tmp_path: Path, redis: PrivateRedis, graph: PrivateGraph
) -> None:
    client = Redis.from_url(redis.url)
    await ensure_groups(client)
    env = fault_env(tmp_path, redis.url, graph.uri)
    command = ("serve", "graph-extractor", "--host", "127.0.0.1")
    first = ServerProcess(env, command, output=tmp_path / "first.log")
    await first.start()
    store = graph.store()
    second: ServerProcess | None = None
    try:
        bus = Bus(PcmSettings(redis_url=redis.url))
        ids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(N)]
        await bus.publish_many(
            STREAM_WRITTEN,
            [
                MemoryWritten(
                    tenant=TENANT, memory_id=m, text=distinct_text(i), created_at=utcnow()
                )
                for i, m in enumerate(ids)
            ],
        )
        await bus.redis.aclose()
        # Killed once it has written some facts and holds a batch it has not acknowledged.
        deadline = time.monotonic() + 120
        while True:
            lag, pending = await _group(client)
            if pending and (await store.stats(TENANT)).get("memories", 0) >= 5:
                break
            assert time.monotonic() < deadline, "the extractor never got going"
            await asyncio.sleep(0.05)
        await first.kill()
        lag, pending = await _group(client)
        assert pending > 0, "no batch in hand at the kill: nothing was tested"

        second = ServerProcess(env, command, output=tmp_path / "second.log")
        await second.start()
        deadline = time.monotonic() + 180
        while await _group(client) != (0, 0):
            assert time.monotonic() < deadline, await _group(client)
            await asyncio.sleep(0.2)

        stats = await store.stats(TENANT)
        assert stats["memories"] == N
        assert await store.existing_memories(TENANT, ids) == set(ids)
        listed, doubled = await _facts(store, ids)
        assert doubled == 0
        assert stats["mentions"] == listed
        print(f"killed with {pending} pending, {lag} unread; {stats}")
    finally:
        await first.kill()
        if second is not None:
            await second.stop()
        await store.close()
        await client.aclose()
