"""Stream semantics on a real Redis: failures stay pending, then go to the dead letters."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from pydantic import BaseModel
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from pcm_common.messaging.bus import Bus, pipeline_status, trim_dead_letters, trim_processed
from pcm_common.messaging.events import (
    PIPELINE_GROUPS,
    STREAM_DLQ,
    STREAM_WRITTEN,
    MemoryChanged,
    MemoryWritten,
)
from pcm_common.runtime.config import PcmSettings
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
    from pcm_common.messaging.bus import ensure_groups

    await ensure_groups(redis)
    await redis.xadd("pcm.memory.written", {"data": "{}"})
    status = await pipeline_status(redis)
    # None of the groups on pcm.memory.written has seen the entry yet.
    assert status["pending"] == len(PIPELINE_GROUPS[STREAM_WRITTEN]) >= 2
    assert status["streams"]["pcm.memory.written"]["groups"]["graph-extractor"]["lag"] == 1
    await redis.aclose()


async def test_trim_drops_only_what_every_group_processed() -> None:
    """Processed entries go (their texts with them); unread and pending ones stay, and the
    pipeline status still counts what is left to do."""
    redis = Redis.from_url(REDIS)
    await redis.flushdb()
    stream, groups = "trim.stream", ("g1", "g2")
    for g in groups:
        await redis.xgroup_create(stream, g, id="0", mkstream=True)
    ids = [await redis.xadd(stream, {"data": f"text {n}"}) for n in range(10)]
    # g1 read and acknowledged 6; g2 read 6 and acknowledged the first 4 (2 pending).
    for g, acked in (("g1", 6), ("g2", 4)):
        got = await redis.xreadgroup(g, "c", {stream: ">"}, count=6)
        read = [entry_id for entry_id, _ in got[0][1]]
        await redis.xack(stream, g, *read[:acked])
    assert await trim_processed(redis, {stream: groups}) == {stream: 4}
    left = [entry_id for entry_id, _ in await redis.xrange(stream)]
    assert left == ids[4:]  # g2's two pending entries and everything unread
    # Nothing more to drop until g2 acknowledges; a group that does not exist yet keeps all.
    assert await trim_processed(redis, {stream: groups}) == {}
    assert await trim_processed(redis, {stream: (*groups, "g3")}) == {}
    await redis.xack(stream, "g2", *ids[4:6])
    assert await trim_processed(redis, {stream: groups}) == {stream: 1}  # up to g2's last read
    infos = {i["name"].decode(): i for i in await redis.xinfo_groups(stream)}
    assert [infos[g]["lag"] for g in groups] == [4, 4]  # the lag still counts what is unread
    await redis.flushdb()
    await redis.aclose()


async def test_dead_letters_are_kept_for_a_while_then_dropped() -> None:
    redis = Redis.from_url(REDIS)
    await redis.flushdb()
    now_s = 1_800_000_000.0
    day_ms = 86_400_000
    old = [f"{int(now_s * 1000) - d * day_ms}-0" for d in (30, 15)]
    recent = [f"{int(now_s * 1000) - d * day_ms}-0" for d in (13, 1)]
    for entry_id in [*old, *recent]:
        await redis.xadd(STREAM_DLQ, {"data": "a failed event"}, id=entry_id)
    assert await trim_dead_letters(redis, 0, now_s) == 0  # 0 keeps them
    assert await trim_dead_letters(redis, 14, now_s) == 2
    left = [e.decode() for e, _ in await redis.xrange(STREAM_DLQ)]
    assert left == recent
    assert await trim_dead_letters(redis, 14, now_s) == 0
    await redis.flushdb()
    await redis.aclose()


async def test_a_failed_publish_is_tried_again_on_a_fresh_connection() -> None:
    url = f"{TEST_REDIS}/14"
    bus = Bus(PcmSettings(redis_url=url))
    first = bus.publish_many
    calls = 0

    async def dead(stream: str, events: Sequence[BaseModel]) -> None:
        nonlocal calls
        calls += 1
        raise RedisConnectionError("Connection closed by server.")

    bus.publish_many = dead  # type: ignore[method-assign]
    try:
        await bus.redis.delete("test.fresh")
        await bus.publish_fresh(
            "test.fresh", [MemoryChanged(tenant="t", memory_id="m", change="pinned")]
        )
        assert calls == 1 and await bus.redis.xlen("test.fresh") == 1
    finally:
        bus.publish_many = first  # type: ignore[method-assign]
        await bus.redis.delete("test.fresh")
        await bus.stop()
