"""Batched consumption on a real Redis: per-entry outcomes inside a batch, dead letters,
a consumer stopped mid-batch loses nothing, and a slow batch is never claimed by its own
process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from pcm_common.messaging.bus import Bus
from pcm_common.messaging.events import STREAM_DLQ, MemoryWritten
from pcm_common.messaging.stream_batches import Outcome
from pcm_common.runtime.config import PcmSettings
from tests.conftest import TEST_REDIS

REDIS = f"{TEST_REDIS}/13"
STREAM, GROUP = "test.batches", "test-batch-group"


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    r = Redis.from_url(REDIS)
    await r.flushdb()
    yield r
    await r.flushdb()
    await r.aclose()


def _bus(consumer: str, **kw: object) -> Bus:
    settings = PcmSettings().model_copy(
        update={"redis_url": REDIS, "consumer_name": consumer, "max_deliveries": 3, **kw}
    )
    return Bus(settings)


def _events(n: int) -> list[MemoryWritten]:
    return [
        MemoryWritten(tenant="t", memory_id=f"m{i}", text=f"text {i}", created_at="2024-01-01")
        for i in range(n)
    ]


async def _until(cond: object, within_s: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not await cond():  # type: ignore[operator]
        if loop.time() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.05)


async def _settled(redis: Redis) -> bool:
    info = next(g for g in await redis.xinfo_groups(STREAM) if g["name"].decode() == GROUP)
    return int(info["lag"] or 0) == 0 and int(info["pending"]) == 0


async def test_batch_outcomes_ack_each_entry_and_dead_letter_failures(redis: Redis) -> None:
    bus = _bus("b1", claim_idle_ms=200)
    seen: list[list[str]] = []

    async def handler(events: list[MemoryWritten]) -> list[Outcome]:
        seen.append([e.memory_id for e in events])
        return [RuntimeError("odd one") if e.memory_id == "m3" else None for e in events]

    bus.consume_batch(STREAM, GROUP, MemoryWritten, handler, max_batch=50)
    await bus.publish_many(STREAM, _events(20))  # before start: read as one batch
    await bus.redis.xadd(STREAM, {"data": b"not json at all"})
    await bus.start()
    try:
        await _until(lambda: _settled(redis))
        first = seen[0]
        assert len(first) == 20, "entries waiting together are handled as one batch"
        handled = [m for batch in seen for m in batch]
        assert sorted(set(handled)) == sorted(f"m{i}" for i in range(20))
        assert handled.count("m3") == 3  # max_deliveries, then the dead letters
        assert all(handled.count(f"m{i}") == 1 for i in range(20) if i != 3)
        letters = [json.loads(f[b"data"]) for _, f in await redis.xrange(STREAM_DLQ)]
        assert sorted(b["body"].get("memory_id", "?") for b in letters) == ["?", "m3"]
        assert await redis.hlen(f"pcm:failures:{STREAM}:{GROUP}") == 0
    finally:
        await bus.stop()


async def test_consumer_stopped_mid_batch_loses_nothing(redis: Redis) -> None:
    """The first consumer's batch never finishes (it is cancelled, as a killed process
    would leave it); a second consumer claims the entries and handles each one."""
    first = _bus("killed", claim_idle_ms=300)
    started = asyncio.Event()

    async def stuck(events: list[MemoryWritten]) -> list[Outcome]:
        started.set()
        await asyncio.sleep(3600)
        return [None] * len(events)

    first.consume_batch(STREAM, GROUP, MemoryWritten, stuck, max_batch=8)
    await first.start()
    await first.publish_many(STREAM, _events(20))
    await asyncio.wait_for(started.wait(), 10)
    await first.stop()  # cancels the stuck batch: its entries stay pending
    assert (await redis.xpending(STREAM, GROUP))["pending"] > 0

    second = _bus("survivor", claim_idle_ms=300)
    done: list[str] = []

    async def ok(events: list[MemoryWritten]) -> list[Outcome]:
        done.extend(e.memory_id for e in events)
        return [None] * len(events)

    second.consume_batch(STREAM, GROUP, MemoryWritten, ok, max_batch=8)
    await second.start()
    try:
        await _until(lambda: _settled(redis))
        assert sorted(done) == sorted(f"m{i}" for i in range(20))
    finally:
        await second.stop()


async def test_slow_batch_is_not_claimed_by_its_own_process(redis: Redis) -> None:
    bus = _bus("slow", claim_idle_ms=100)
    calls: list[str] = []

    async def slow(events: list[MemoryWritten]) -> list[Outcome]:
        calls.extend(e.memory_id for e in events)
        await asyncio.sleep(1.5)  # well past claim_idle_ms while in hand
        return [None] * len(events)

    bus.consume_batch(STREAM, GROUP, MemoryWritten, slow, max_batch=5)
    await bus.start()
    try:
        await bus.publish_many(STREAM, _events(10))
        await _until(lambda: _settled(redis))
        assert sorted(calls) == sorted(f"m{i}" for i in range(10))
    finally:
        await bus.stop()


async def test_several_readers_handle_batches_at_once_and_each_entry_once(redis: Redis) -> None:
    bus = _bus("readers", claim_idle_ms=60_000)
    handled: list[str] = []
    running = 0
    overlap = 0

    async def handler(events: list[MemoryWritten]) -> list[Outcome]:
        nonlocal running, overlap
        running += 1
        overlap = max(overlap, running)
        await asyncio.sleep(0.05)  # waiting on a store: the other reader goes on meanwhile
        handled.extend(e.memory_id for e in events)
        running -= 1
        return [None] * len(events)

    bus.consume_batch(STREAM, GROUP, MemoryWritten, handler, max_batch=5, readers=3)
    await bus.start()
    try:
        await bus.publish_many(STREAM, _events(60))
        await _until(lambda: _settled(redis))
        assert sorted(handled) == sorted(f"m{i}" for i in range(60)), "each entry once"
        assert overlap >= 2, "batches of one group were handled concurrently"
    finally:
        await bus.stop()
