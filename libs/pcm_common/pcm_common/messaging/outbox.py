"""Outboxes for the events a write publishes after changing a store, so that a publish that
fails (Redis restarted in between: the client got a 503 for a change that was made, issue
33) is made up for by the sweeper within `PCM_OUTBOX_INTERVAL_S` + `PCM_OUTBOX_GRACE_S`.

- `pcm.memory.written`: a new or rewritten memory's id is noted (`note`) before its point is
  written and crossed out (`cross_out`) once its event is on the stream; the sweeper
  publishes the memory as it is stored now.
- `pcm.memory.changed` (pinned, unpinned, updated, deleted, archived, reactivated,
  repeated): the event itself is noted (`owe`) before the change and crossed out once
  published (`pay`), or dropped where the change did not happen (`forgive`: nothing to
  delete). The sweeper publishes a noted event where the store shows it happened: a
  `deleted` one only if the memory is gone, any other only if it is there.

Notes are noted before the store change because Redis is needed for the note: once the
change is made, a Redis that went away would take the note with the event. Consumers are
idempotent (they read the state, not the event's claims), so a note left by a write that
did publish only costs a redundant event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from redis.asyncio import Redis

from pcm_common.domain.memory import MemoryRecord
from pcm_common.messaging.events import STREAM_CHANGED, STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.ports import EventPorts, StorePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import OUTBOX_CHANGED, OUTBOX_WRITTEN

log = get_logger("outbox")

# Notes handed over per sweep: a failed publish leaves as many as the writes it failed.
SWEEP_BATCH = 500


def _member(tenant: str, memory_id: str) -> str:
    return json.dumps([tenant, memory_id])


async def note(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> None:
    """Before the upsert: these memories' events are owed."""
    if memory_ids:
        now = time.time()
        await redis.zadd(OUTBOX_WRITTEN, {_member(tenant, m): now for m in memory_ids})


async def cross_out(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> None:
    """After the publish: nothing is owed for them any more."""
    if memory_ids:
        await redis.zrem(OUTBOX_WRITTEN, *(_member(tenant, m) for m in memory_ids))


async def owe(redis: Redis, events: Sequence[MemoryChanged]) -> None:
    """Before the store change that `events` announce: they are owed."""
    if events:
        now = time.time()  # (a microsecond apart: the sweeper sends them in this order)
        await redis.zadd(
            OUTBOX_CHANGED, {e.model_dump_json(): now + k * 1e-6 for k, e in enumerate(events)}
        )


async def forgive(redis: Redis, events: Sequence[MemoryChanged]) -> None:
    """The change did not happen (or was announced): nothing is owed for it any more."""
    if events:
        await redis.zrem(OUTBOX_CHANGED, *(e.model_dump_json() for e in events))


async def pay(res: EventPorts, events: Sequence[MemoryChanged]) -> None:
    """After the store change: the events published, then crossed out. A publish that
    fails leaves them owed."""
    if events:
        await res.bus.publish_many(STREAM_CHANGED, list(events))
        await forgive(res.redis, events)


async def pay_or_leave_owed(res: EventPorts, events: Sequence[MemoryChanged]) -> bool:
    """`pay`, for a stream handler whose changes are made: a failed publish leaves the
    events owed (the outbox job sends them) instead of failing the handler, whose
    redelivery would find the change made and announce nothing, or apply it twice.
    False when they were left owed."""
    try:
        await pay(res, events)
    except Exception as exc:
        log.warning("changes_left_owed", count=len(events), error=repr(exc)[:300])
        return False
    for e in events:
        log.info("change_published", tenant=e.tenant, memory_id=e.memory_id, change=e.change)
    return True


async def publish_owed(res: StorePorts, grace_s: float) -> int:
    """Publish the events owed for notes older than `grace_s` (a write still in flight is
    younger) where the store shows the change; returns how many were published. Safe with
    replicas: a note is handled by whoever removes it (ZREM answers 1 once)."""
    written = await _handle_owed(res, OUTBOX_WRITTEN, grace_s, _republish_written)
    return written + await _handle_owed(res, OUTBOX_CHANGED, grace_s, _republish_change)


async def _handle_owed(
    res: StorePorts,
    key: str,
    grace_s: float,
    republish: Callable[[StorePorts, bytes], Awaitable[int]],
) -> int:
    cutoff = time.time() - grace_s
    raw = cast(list[bytes], await res.redis.zrangebyscore(key, 0, cutoff, start=0, num=SWEEP_BATCH))
    published = 0
    for member in raw:
        if not await res.redis.zrem(key, member):
            continue  # another replica took it
        try:
            published += await republish(res, member)
        except Exception:
            await res.redis.zadd(key, {member: time.time()})  # the next sweep
            raise
    return published


async def _republish_written(res: StorePorts, member: bytes) -> int:
    tenant, memory_id = json.loads(member)
    found = await res.vectors.get(tenant, [memory_id])
    if not found:
        return 0  # the upsert never happened, or the memory was deleted since
    rec = MemoryRecord.from_payload(found[0].payload)
    await res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec, "repair"))
    log.info("outbox_republished", tenant=tenant, memory_id=memory_id)
    return 1


async def _republish_change(res: StorePorts, member: bytes) -> int:
    event = MemoryChanged.model_validate_json(member)
    found = await res.vectors.get(event.tenant, [event.memory_id], fields=("state",))
    if bool(found) == (event.change == "deleted"):
        return 0  # the change was never made: a delete that failed, a memory never stored
    await res.bus.publish(STREAM_CHANGED, event)
    log.info(
        "outbox_republished", tenant=event.tenant, memory_id=event.memory_id, change=event.change
    )
    return 1
