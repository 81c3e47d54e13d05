"""Tombstones of deleted memories: the positive evidence graph repair needs before it
removes a memory's facts (issue 33 E).

Repair used to remove the facts of every graph memory its vector store did not hold, so a
vector store that answered empty, or a second deployment sharing the graph server and a
tenant name, erased graphs. Every path that deletes a memory (`pcm_common.data.forgetting`,
consolidation's stale records) records its id here first; repair removes facts only for
tombstoned ids that the vector store also no longer holds.

One sorted set per tenant (`keys.tombstones`): member the memory id, score the
deletion time; entries older than `KEEP_DAYS` are dropped as new ones are recorded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from redis.asyncio import Redis

from pcm_common.stores.redis import keys

# Longer than any outage of a delete event's consumer (dead letters go after 14 days).
KEEP_DAYS = 400


async def record(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> None:
    """Before the delete: these memories are being deleted (a delete that then fails
    leaves a tombstone of a memory that exists, which repair checks)."""
    if not memory_ids:
        return
    now = time.time()
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(keys.tombstones(tenant), {m: now for m in memory_ids})
        pipe.zremrangebyscore(keys.tombstones(tenant), 0, now - KEEP_DAYS * 86_400)
        await pipe.execute()


async def deleted(redis: Redis, tenant: str, memory_ids: Sequence[str]) -> set[str]:
    """Which of `memory_ids` carry a tombstone (one round trip)."""
    if not memory_ids:
        return set()
    scores = await redis.zmscore(keys.tombstones(tenant), list(memory_ids))
    return {m for m, s in zip(memory_ids, scores, strict=True) if s is not None}
