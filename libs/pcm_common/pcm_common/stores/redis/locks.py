"""Short Redis locks on a set of keys, taken all at once or not at all.

Ingest holds one per exact text (tenant, text, scope, user) while it looks for a stored copy
and stores or reinforces: two requests carrying the same text at the same moment (a client
retrying, parallel agents) both found no copy and stored two memories. PATCH and DELETE of
one memory hold one per memory id: a PATCH that read the memory before a DELETE and wrote
it back after brought it back. Redis, not an in-process lock: ingest replicas share it.

All or nothing: a request that gets only some of its keys gives them back and tries again
after a short random pause, so two requests with overlapping keys never hold a part each
and wait on one another. The TTL frees the keys of a process that died holding them; past
`wait_s` a request goes on without them (logged), as before these locks existed.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from redis.asyncio import Redis
from redis.crc import key_slot

from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import KEY_LOCK_PREFIX
from pcm_common.stores.redis.scripts import RELEASE_LOCKS

log = get_logger("keylocks")


async def release(redis: Redis, names: list[str], token: str) -> None:
    """Delete the lock keys `names` that `token` still holds (the sweeper's job locks too).
    One script per hash slot: the names PCM holds together are one tenant's (one slot), but
    a Redis Cluster refuses a script whose keys span slots, whoever the caller."""
    by_slot: dict[int, list[str]] = {}
    for name in names:
        by_slot.setdefault(key_slot(name.encode()), []).append(name)
    for group in by_slot.values():
        await redis.eval(RELEASE_LOCKS, len(group), *group, token)


class KeyLocks:
    def __init__(self, redis: Redis, ttl_ms: int = 15_000, wait_s: float = 10.0) -> None:
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.wait_s = wait_s

    @asynccontextmanager
    async def hold(self, keys: Iterable[str]) -> AsyncIterator[None]:
        names = sorted({KEY_LOCK_PREFIX + k for k in keys})
        token = uuid.uuid4().hex
        held = await self._take(names, token) if names else []
        try:
            yield
        finally:
            if held:
                await release(self.redis, held, token)

    async def _take(self, names: list[str], token: str) -> list[str]:
        deadline = time.monotonic() + self.wait_s
        pause = 0.005
        while True:
            pipe = self.redis.pipeline(transaction=False)
            for name in names:
                pipe.set(name, token, nx=True, px=self.ttl_ms)
            got = await pipe.execute()
            held = [n for n, ok in zip(names, got, strict=True) if ok]
            if len(held) == len(names):
                return held
            if held:
                await release(self.redis, held, token)
            if time.monotonic() > deadline:
                log.warning("key_locks_timed_out", keys=len(names), busy=len(names) - len(held))
                return []
            await asyncio.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, 0.2)
