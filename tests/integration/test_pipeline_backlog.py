"""The pipeline backlog is counted from the streams' entries, not from Redis's `lag`, which a
restarted Redis answers null (issue 33: `/v1/pipeline` never drained)."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from pcm_common.messaging.backlog import unread_bound
from pcm_common.messaging.bus import ensure_groups, pipeline_status
from pcm_common.messaging.events import (
    GROUP_GRAPH,
    GROUP_SWEEPER_RECONSOLIDATE,
    GROUP_SWEEPER_WRITTEN,
    STREAM_WRITTEN,
)
from tests.redis_server import private_redis


def test_unread_bound_trusts_ids_over_lag() -> None:
    info = {
        "length": 5000,
        "last-generated-id": b"200-0",
        "first-entry": (b"10-0", {}),
    }
    # Everything delivered: an inflated or null lag changes nothing.
    assert unread_bound(info, (200, 0), 3414) == 0
    assert unread_bound(info, (200, 0), None) == 0
    # Nothing of what is left was delivered: the whole stream.
    assert unread_bound(info, (5, 0), None) == 5000
    # A plausible lag is used; an impossible or missing one is counted instead.
    assert unread_bound(info, (100, 0), 42) == 42
    assert unread_bound(info, (100, 0), 5000) is None
    assert unread_bound(info, (100, 0), None) is None
    assert unread_bound({"length": 0, "last-generated-id": b"200-0"}, (1, 0), 7) == 0


async def _read(redis: Redis, group: str, count: int) -> None:
    got = await redis.xreadgroup(group, "c", {STREAM_WRITTEN: ">"}, count=count)
    ids = [entry_id for _, entries in got for entry_id, _ in entries]
    if ids:
        await redis.xack(STREAM_WRITTEN, group, *ids)


async def test_backlog_counts_unread_when_lag_is_lost(tmp_path: Path) -> None:
    async with private_redis(tmp_path) as server:
        redis = Redis.from_url(server.url)
        await ensure_groups(redis)
        for n in range(100):
            await redis.xadd(STREAM_WRITTEN, {"data": f"{n}"})
        await _read(redis, GROUP_GRAPH, 60)
        await _read(redis, GROUP_SWEEPER_WRITTEN, 100)
        await redis.aclose()
        await server.restart()
        redis = Redis.from_url(server.url)
        try:
            for n in range(50):
                await redis.xadd(STREAM_WRITTEN, {"data": f"after {n}"})
            await redis.xreadgroup(GROUP_GRAPH, "c", {STREAM_WRITTEN: ">"}, count=5)
            # (Redis 7.0 answers lag null here: entries-read did not survive the restart.)
            counts = (await pipeline_status(redis))["streams"][STREAM_WRITTEN]["groups"]
            assert counts[GROUP_GRAPH] == {"lag": 85, "pending": 5}
            assert counts[GROUP_SWEEPER_WRITTEN] == {"lag": 50, "pending": 0}
            await _read(redis, GROUP_SWEEPER_WRITTEN, 1000)
            got = await redis.xreadgroup(GROUP_GRAPH, "c", {STREAM_WRITTEN: "0"}, count=1000)
            pending = [entry_id for _, entries in got for entry_id, _ in entries]
            await redis.xack(STREAM_WRITTEN, GROUP_GRAPH, *pending)
            await _read(redis, GROUP_GRAPH, 1000)
            await _read(redis, GROUP_SWEEPER_RECONSOLIDATE, 1000)  # never read: 150 behind
            status = await pipeline_status(redis)
            assert status["pending"] == 0, status
        finally:
            await redis.aclose()
