"""docs/operations.md's Redis backup and restore, run as written: BGSAVE on a live Redis
holding PCM's state (streams with consumer groups and unacknowledged entries, outbox notes,
keys with expiries), its dump.rdb copied, restored into a fresh Redis (append-only file off
to load it, then switched on), which then holds the same state and keeps it over a restart."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from pcm_common.domain.clock import utcnow
from pcm_common.messaging.bus import Bus, ensure_groups
from pcm_common.messaging.events import GROUP_GRAPH, STREAM_WRITTEN, MemoryWritten
from pcm_common.messaging.outbox import note
from pcm_common.runtime.config import PcmSettings
from tests.faults.conftest import distinct_text
from tests.redis_server import PrivateRedis, private_redis

pytestmark = pytest.mark.faults


async def _state(client: Redis) -> dict[str, Any]:
    """Everything PCM keeps in Redis, comparably: each key's type and contents, each
    stream's entries and its groups' positions and pending counts."""
    out: dict[str, Any] = {}
    async for raw in client.scan_iter(count=1000):
        key = raw.decode()
        kind = (await client.type(key)).decode()
        if kind == "stream":
            groups = sorted(
                (g["name"], g["last-delivered-id"], g["pending"])
                for g in await client.xinfo_groups(key)
            )
            out[key] = (kind, await client.xrange(key), groups)
        else:
            out[key] = (kind, await client.dump(key), await client.ttl(key) > 0)
    return out


async def _until(client: Redis, field: str) -> None:
    for _ in range(600):
        if not int((await client.info("persistence"))[field]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{field} never ended")


async def test_a_redis_backup_restored_into_a_fresh_redis(tmp_path: Path) -> None:
    async with private_redis(tmp_path / "live") as live:
        client = Redis.from_url(live.url)
        bus = Bus(PcmSettings(redis_url=live.url))
        try:
            await ensure_groups(client)
            events = [
                MemoryWritten(
                    tenant="t", memory_id=f"m{i}", text=distinct_text(i), created_at=utcnow()
                )
                for i in range(50)
            ]
            await bus.publish_many(STREAM_WRITTEN, events)
            # A batch in hand: read, not acknowledged.
            await client.xreadgroup(GROUP_GRAPH, "c1", {STREAM_WRITTEN: ">"}, count=10)
            await note(client, "t", ["m1", "m2"])
            await client.set("pcm:idempotency:t:example", "{}", ex=3600)
            before = await _state(client)

            # The backup: BGSAVE, wait for it, copy the file.
            last = await client.lastsave()
            await client.bgsave()
            await _until(client, "rdb_bgsave_in_progress")
            assert await client.lastsave() >= last
            backup = tmp_path / "backup"
            backup.mkdir()
            shutil.copy2(live.folder / "dump.rdb", backup / "dump.rdb")
        finally:
            await bus.redis.aclose()
            await client.aclose()

    # The restore: a fresh Redis loads dump.rdb with the append-only file off...
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    shutil.copy2(backup / "dump.rdb", fresh_dir / "dump.rdb")
    fresh = PrivateRedis(fresh_dir, args=("--appendonly", "no"))
    await fresh.start()
    try:
        client = Redis.from_url(fresh.url)
        try:
            assert await _state(client) == before
            # ...then switches it on, which writes the append-only file from memory.
            await client.config_set("appendonly", "yes")
            await _until(client, "aof_rewrite_in_progress")
            await asyncio.sleep(0.2)
            await _until(client, "aof_rewrite_scheduled")
        finally:
            await client.aclose()
    finally:
        await fresh.stop()
    # Restarted as the project runs Redis (append-only on): the state is still there.
    again = PrivateRedis(fresh_dir)
    await again.start()
    try:
        client = Redis.from_url(again.url)
        try:
            assert await _state(client) == before
        finally:
            await client.aclose()
    finally:
        await again.stop()
