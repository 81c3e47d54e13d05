"""The graph-extractor through Redis Streams with its real handler:

- the same event delivered ten times leaves the graph exactly as one delivery;
- killing Neo4j during ingest loses nothing: bus retries and the repair job complete every
  extraction once it is back (a separate Neo4j on its own port and data dir).

Redis database: PCM_GRAPH_TEST_REDIS_DB (default 12) of PCM_TEST_REDIS; it is flushed.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import MemoryRecord, Strength, text_hash
from pcm_common.messaging.bus import ensure_groups
from pcm_common.messaging.events import (
    GROUP_GRAPH,
    GROUP_SWEEPER_GRAPH,
    STREAM_DLQ,
    STREAM_EXTRACTED,
    STREAM_WRITTEN,
    MemoryExtracted,
    MemoryWritten,
)
from pcm_common.runtime.resources import Resources
from pcm_common.stores.vectors import VectorPoint
from pcm_graph_extractor.component import GraphExtractorComponent
from pcm_graph_extractor.settings import GraphExtractorSettings
from tests.conftest import NEO4J_URI, TEST_REDIS, free_port
from tests.integration.test_graph_store import snapshot

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

REDIS_URL = f"{TEST_REDIS}/{os.environ.get('PCM_GRAPH_TEST_REDIS_DB', '12')}"
ROOT = Path(__file__).resolve().parents[2]
TEXT = (
    "Caroline: I went to the LGBTQ support group in Boston with Melanie. We migrated from "
    "MySQL to Postgres and I work at Google."
)


async def _settled(redis: Redis, groups: dict[str, str], within_s: float = 120.0) -> None:
    """Wait until every (stream -> group) has read and acknowledged everything."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        busy = False
        for stream, group in groups.items():
            try:
                infos = await redis.xinfo_groups(stream)
            except Exception:
                busy = True
                continue
            info = next((g for g in infos if g["name"].decode() == group), None)
            if info is None or int(info["lag"] or 0) or int(info["pending"]):
                busy = True
        if not busy:
            return
        if loop.time() > deadline:
            raise TimeoutError(f"not settled: {groups}")
        await asyncio.sleep(0.1)


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    r = Redis.from_url(REDIS_URL)
    await r.flushdb()
    await ensure_groups(r)
    yield r
    await r.flushdb()
    await r.aclose()


def _settings(**kw: Any) -> GraphExtractorSettings:
    base: dict[str, Any] = {
        "redis_url": REDIS_URL,
        "neo4j_uri": NEO4J_URI,
        "claim_idle_ms": 800,
        "write_attempts": 2,
        "write_backoff_s": 0.05,
        "consumer_name": f"test-{uuid.uuid4().hex[:6]}",
    }
    base.update(kw)
    return GraphExtractorSettings(**base)


async def test_ten_deliveries_through_stream_equal_one(redis: Redis) -> None:
    settings = _settings()
    res = Resources(settings)
    comp = GraphExtractorComponent(res, settings)
    once, many = f"once-{uuid.uuid4().hex[:8]}", f"many-{uuid.uuid4().hex[:8]}"
    mid = str(uuid.uuid4())
    try:
        comp.consume()
        await comp.start()
        await res.bus.start()
        await res.bus.publish(
            STREAM_WRITTEN,
            MemoryWritten(tenant=once, memory_id=mid, text=TEXT, created_at=utcnow()),
        )
        # Ten deliveries of the same memory (distinct entries, as redelivery/repair makes).
        await res.bus.publish_many(
            STREAM_WRITTEN,
            [
                MemoryWritten(tenant=many, memory_id=mid, text=TEXT, created_at=utcnow())
                for _ in range(10)
            ],
        )
        await _settled(redis, {STREAM_WRITTEN: GROUP_GRAPH})
        assert await res.graph.stats(once) == await res.graph.stats(many)
        assert (await res.graph.stats(once))["relations"] >= 2
        driver = res.graph._driver  # type: ignore[attr-defined]

        def norm(snap: dict[str, Any], t: str) -> dict[str, Any]:
            import json

            def strip(x: Any) -> Any:
                if isinstance(x, dict):
                    return {
                        k: strip(v) for k, v in x.items() if k not in ("first_seen", "last_seen")
                    }
                if isinstance(x, list):
                    return [strip(v) for v in x]
                return x

            return {
                k: sorted(
                    json.dumps(strip(json.loads(r.replace(t, "T"))), sort_keys=True) for r in v
                )
                for k, v in snap.items()
            }

        assert norm(await snapshot(driver, many), many) == norm(await snapshot(driver, once), once)
        # Each tenant's memory was announced as extracted; deliveries handled in one batch
        # share one announcement (the sweeper's marking is idempotent either way).
        assert await redis.xlen(STREAM_EXTRACTED) >= 2
        assert await redis.xlen(STREAM_DLQ) == 0
    finally:
        for t in (once, many):
            await res.graph.delete_memory(t, mid)
        await comp.stop()
        await res.aclose()


async def test_concurrent_batches_of_one_replica_write_in_turn(redis: Redis) -> None:
    """Two readers extract at once, but a replica's graph writes never overlap (concurrent
    merges of the same entities made the server abort transactions); nothing is lost."""
    settings = _settings(batch_readers=2, batch_max=4)
    res = Resources(settings)
    comp = GraphExtractorComponent(res, settings)
    tenant = f"turns-{uuid.uuid4().hex[:8]}"
    write = res.graph.write_facts_many
    running = overlap = calls = 0

    async def tracked(rows: Any) -> None:
        nonlocal running, overlap, calls
        running += 1
        calls += 1
        overlap = max(overlap, running)
        try:
            await asyncio.sleep(0.02)  # widen the window a concurrent write would fall in
            await write(rows)
        finally:
            running -= 1

    res.graph.write_facts_many = tracked  # type: ignore[method-assign]
    ids = [str(uuid.uuid4()) for _ in range(24)]
    try:
        comp.consume()
        await comp.start()
        await res.bus.start()
        await res.bus.publish_many(
            STREAM_WRITTEN,
            [
                MemoryWritten(tenant=tenant, memory_id=m, text=TEXT, created_at=utcnow())
                for m in ids
            ],
        )
        await _settled(redis, {STREAM_WRITTEN: GROUP_GRAPH})
        assert calls >= 2 and overlap == 1, "batches written one at a time"
        assert (await res.graph.stats(tenant))["memories"] == len(ids)
        assert await redis.xlen(STREAM_DLQ) == 0
    finally:
        for m in ids:
            await res.graph.delete_memory(tenant, m)
        await comp.stop()
        await res.aclose()


# -- Neo4j killed during ingest ---------------------------------------------------------


def _neo4j(cmd: str, env: dict[str, str]) -> None:
    subprocess.run(
        [str(ROOT / "scripts" / "neo4j.sh"), cmd], env=env, check=True, timeout=180, cwd=ROOT
    )


def _record(tenant: str, text: str) -> MemoryRecord:
    now = utcnow() - timedelta(hours=1)
    return MemoryRecord(
        id=str(uuid.uuid4()),
        tenant=tenant,
        text=text,
        text_hash=text_hash(text),
        created_at=now,
        ingested_at=now,
        strength=Strength(t_ref=now),
    )


def _vec(dim: int) -> list[float]:
    v = [random.random() for _ in range(dim)]
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


@pytest.mark.timeout(600)
async def test_killing_neo4j_during_ingest_loses_nothing(redis: Redis, tmp_path: Path) -> None:
    from pcm_common.stores.redis import tombstones
    from pcm_sweeper.graph_repair import remove_orphan_facts, republish_unextracted
    from pcm_sweeper.handlers import SweeperHandlers
    from pcm_sweeper.settings import SweeperSettings

    port = free_port()
    env = {
        **os.environ,
        "NEO4J_BOLT_PORT": str(port),
        "PCM_NEO4J_VAR": str(tmp_path / "neo4j"),
        "NEO4J_PASSWORD": "pcm-dev-password",
    }
    await asyncio.to_thread(_neo4j, "start", env)
    uri = f"bolt://127.0.0.1:{port}"
    settings = _settings(
        neo4j_uri=uri,
        qdrant_path=tmp_path / "qdrant",
        max_deliveries=3,
        graph_timeout_s=0.3,
        write_attempts=1,
    )
    res = Resources(settings)
    comp = GraphExtractorComponent(res, settings)
    sweeper = SweeperHandlers(res, SweeperSettings(redis_url=REDIS_URL))
    tenant = f"kill-{uuid.uuid4().hex[:8]}"
    names = ["Alice", "Bob", "Caroline", "Melanie", "John"]
    recs = [
        _record(
            tenant, f"{names[i % 5]}: I visited Paris and went camping with {names[(i + 1) % 5]}."
        )
        for i in range(24)
    ]
    try:
        await res.vectors.ensure_collection()
        await res.vectors.upsert(
            [VectorPoint(r.id, _vec(settings.embedding_dim), r.to_payload()) for r in recs]
        )
        comp.consume()
        res.bus.consume_batch(
            STREAM_EXTRACTED, GROUP_SWEEPER_GRAPH, MemoryExtracted, sweeper.on_extracted_batch
        )
        await comp.start()
        await res.bus.start()

        pid = int((tmp_path / "neo4j" / "neo4j.pid").read_text())
        os.kill(pid, signal.SIGKILL)  # the graph dies mid-ingest, no clean shutdown
        await asyncio.sleep(0.5)

        def written(r: MemoryRecord) -> MemoryWritten:
            return MemoryWritten(
                tenant=tenant, memory_id=r.id, text=r.text, created_at=r.created_at
            )

        # First half while the graph is down: retried, and dead-lettered after N failures.
        await res.bus.publish_many(STREAM_WRITTEN, [written(r) for r in recs[:12]])
        for _ in range(1200):
            if await redis.xlen(STREAM_DLQ) >= 1:
                break
            await asyncio.sleep(0.1)
        assert await redis.xlen(STREAM_DLQ) >= 1
        # Second half, then the graph comes back while they are being retried.
        await res.bus.publish_many(STREAM_WRITTEN, [written(r) for r in recs[12:]])
        await asyncio.to_thread(_neo4j, "start", env)  # consumers keep running meanwhile
        await _settled(
            redis, {STREAM_WRITTEN: GROUP_GRAPH, STREAM_EXTRACTED: GROUP_SWEEPER_GRAPH}, 300
        )

        # The repair job publishes whatever is still not extracted; consumers finish it.
        now = utcnow()
        republished = await republish_unextracted(res, tenant, now, grace_s=60)
        assert republished >= 1
        await _settled(redis, {STREAM_WRITTEN: GROUP_GRAPH, STREAM_EXTRACTED: GROUP_SWEEPER_GRAPH})

        ids = [r.id for r in recs]
        assert await res.graph.existing_memories(tenant, ids) == set(ids)
        points = await res.vectors.get(tenant, ids)
        assert all(p.payload["graph"]["extracted"] for p in points)
        assert await republish_unextracted(res, tenant, utcnow(), grace_s=60) == 0
        stats = await res.graph.stats(tenant)
        assert stats["memories"] == len(recs)
        # Entities once each, whatever the number of deliveries.
        assert stats["entities"] == len(
            {(e.type, e.key) for r in recs for e in (await res.extractor.extract(r.text)).entities}
        )

        # Orphans: absence from the vector store is no evidence (issue 33 E); memories
        # deleted with a tombstone whose delete event was lost lose their facts.
        gone = ids[:3]
        await res.vectors.delete(tenant, gone)
        assert await remove_orphan_facts(res, tenant) == 0
        await tombstones.record(res.redis, tenant, gone)
        assert await remove_orphan_facts(res, tenant) == 3
        assert await res.graph.existing_memories(tenant, ids) == set(ids[3:])
        assert await remove_orphan_facts(res, tenant) == 0
    finally:
        await comp.stop()
        await res.aclose()
        await asyncio.to_thread(_neo4j, "stop", env)
