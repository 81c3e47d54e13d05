"""Stream semantics on a real Redis: failures stay pending, then go to the dead letters."""

from __future__ import annotations

import asyncio
import json

from redis.asyncio import Redis

from pcm_common.bus import Bus, pipeline_status
from pcm_common.config import PcmSettings
from pcm_common.events import STREAM_DLQ, MemoryWritten
from tests.conftest import TEST_REDIS

REDIS = f"{TEST_REDIS}/13"


async def test_failing_handler_dead_letters_after_max_deliveries() -> None:
    redis = Redis.from_url(REDIS)
    await redis.flushdb()
    settings = PcmSettings().model_copy(
        update={"redis_url": REDIS, "claim_idle_ms": 300, "max_deliveries": 3, "consumer_name": "t"}
    )
    bus = Bus(settings)
    calls: list[str] = []

    async def always_fails(event: MemoryWritten) -> None:
        calls.append(event.memory_id)
        raise RuntimeError("graph is down")

    bus.consume("test.stream", "test-group", MemoryWritten, always_fails)
    await bus.start()
    try:
        await bus.publish(
            "test.stream",
            MemoryWritten(tenant="t", memory_id="m1", text="x", created_at="2024-01-01T00:00:00Z"),
        )
        await bus.redis.xadd("test.stream", {"data": b"not json at all"})
        for _ in range(200):
            if await redis.xlen(STREAM_DLQ) >= 2:
                break
            await asyncio.sleep(0.1)
        letters = await redis.xrange(STREAM_DLQ)
        assert len(letters) == 2
        assert calls == ["m1"] * 3
        bodies = [json.loads(fields[b"data"]) for _, fields in letters]
        assert any("graph is down" in b["error"] and b["deliveries"] == 3 for b in bodies)
        pending = await redis.xpending("test.stream", "test-group")
        assert pending["pending"] == 0
    finally:
        await bus.stop()
        await redis.aclose()


async def test_pipeline_status_counts_unprocessed_entries() -> None:
    redis = Redis.from_url(REDIS)
    await redis.flushdb()
    from pcm_common.bus import ensure_groups

    await ensure_groups(redis)
    await redis.xadd("pcm.memory.written", {"data": "{}"})
    status = await pipeline_status(redis)
    # Both groups on pcm.memory.written have not seen the entry yet.
    assert status["pending"] == 2
    assert status["streams"]["pcm.memory.written"]["groups"]["graph-extractor"]["lag"] == 1
    await redis.aclose()
