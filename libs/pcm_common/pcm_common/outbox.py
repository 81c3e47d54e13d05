"""An outbox for `pcm.memory.written`: a new memory's id is noted in Redis before its point is
written to the vector store and crossed out once its event is on the stream.

A write whose upsert succeeded but whose publish failed (Redis restarted in between: the
client got a 503 for a stored memory, issue 33) leaves its note, and the sweeper publishes
the event again within `PCM_OUTBOX_INTERVAL_S` + `PCM_OUTBOX_GRACE_S` instead of waiting
for the 15-minute repair job. Consumers are idempotent, so a note left by a write that did
publish only costs a redundant event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis

from pcm_common.domain.memory import MemoryRecord
from pcm_common.events import STREAM_WRITTEN, MemoryWritten
from pcm_common.resources import Resources
from pcm_common.telemetry import get_logger

log = get_logger("outbox")

OUTBOX_KEY = "pcm:outbox:written"  # sorted set: JSON [tenant, memory id] -> noted at (s)
# Notes handed over per sweep: a failed publish leaves as many as the writes it failed.
SWEEP_BATCH = 500


def _member(tenant: str, memory_id: str) -> str:
    return json.dumps([tenant, memory_id])


async def note(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> None:
    """Before the upsert: these memories' events are owed."""
    if memory_ids:
        now = time.time()
        await redis.zadd(OUTBOX_KEY, {_member(tenant, m): now for m in memory_ids})


async def cross_out(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> None:
    """After the publish: nothing is owed for them any more."""
    if memory_ids:
        await redis.zrem(OUTBOX_KEY, *(_member(tenant, m) for m in memory_ids))


async def publish_owed(res: Resources, grace_s: float) -> int:
    """Publish `pcm.memory.written` again for every note older than `grace_s` (a write still
    in flight is younger) whose memory exists; returns how many were published. Safe with
    replicas: a note is handled by whoever removes it (ZREM answers 1 once)."""
    cutoff = time.time() - grace_s
    raw = cast(
        list[bytes], await res.redis.zrangebyscore(OUTBOX_KEY, 0, cutoff, start=0, num=SWEEP_BATCH)
    )
    published = 0
    for member in raw:
        if not await res.redis.zrem(OUTBOX_KEY, member):
            continue  # another replica took it
        tenant, memory_id = json.loads(member)
        try:
            published += await _republish(res, tenant, memory_id)
        except Exception:
            await res.redis.zadd(OUTBOX_KEY, {member: time.time()})  # the next sweep
            raise
    return published


async def _republish(res: Resources, tenant: str, memory_id: str) -> int:
    found = await res.vectors.get(tenant, [memory_id])
    if not found:
        return 0  # the upsert never happened, or the memory was deleted since
    rec = MemoryRecord.from_payload(found[0].payload)
    await res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec, "repair"))
    log.info("outbox_republished", tenant=tenant, memory_id=memory_id)
    return 1
