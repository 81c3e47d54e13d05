"""The capture gate's short-lived state in Redis (issue 36, items 4 and 5).

- A session's recent automatic captures (`keys.capture_context`): the gate's context, a
  capped list with a TTL, each entry the capture's text and vector (so a capture is
  embedded once, not at every later one of its session).
- The captures the gate skipped (`keys.capture_buffer`): one sorted set per tenant,
  scored by each entry's expiry, capped, read and emptied by the sweeper's consolidation,
  which distils facts from them (mnemos keeps every interaction in an episodic buffer,
  whether it passed the gate or not). Expired entries are dropped on every write and read.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from redis.asyncio import Redis

from pcm_common.stores.redis import keys

_VECTOR_DIGITS = 5  # cosines to four places need no more


def stream_of(owner: Sequence[str], session: str | None) -> str:
    """The capture-context key part of one session of one owner (user, scope, workspace,
    project): hashed, so no name needs escaping; without a session id, the owner's stream."""
    parts = "\x1f".join([*owner, session or ""])
    return hashlib.sha256(parts.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Recent:
    text: str
    vector: list[float]


@dataclass(frozen=True)
class Buffered:
    """A skipped capture: what the write said, whose it is, and when it was made."""

    text: str
    user_id: str | None
    scope: str
    workspace: str
    project: str
    created_at: str  # ISO 8601
    salience: float
    session: str | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    def owner(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "scope": self.scope,
            "workspace": self.workspace,
            "project": self.project,
        }


class CaptureBuffer:
    def __init__(
        self,
        redis: Redis,
        *,
        context_size: int = 8,
        context_ttl_s: float = 7200.0,
        buffer_ttl_s: float = 86400.0,
        buffer_max: int = 2000,
    ) -> None:
        self.redis = redis
        self.context_size = context_size
        self.context_ttl_s = context_ttl_s
        self.buffer_ttl_s = buffer_ttl_s
        self.buffer_max = buffer_max

    async def recent(self, tenant: str, stream: str) -> list[Recent]:
        raw = await self.redis.lrange(keys.capture_context(tenant, stream), 0, -1)
        out: list[Recent] = []
        for item in raw:
            try:
                data = json.loads(item)
                out.append(Recent(str(data["t"]), [float(x) for x in data["v"]]))
            except (ValueError, KeyError, TypeError):
                continue  # a malformed entry is no context
        return out

    async def remember(
        self, tenant: str, stream: str, items: Sequence[Recent], owner: dict[str, Any]
    ) -> None:
        """Add captures to the session's context, newest first, capped and expiring; each
        entry names its owner (user_id, workspace, project) so an erasure finds it."""
        if not items or self.context_size <= 0:
            return
        key = keys.capture_context(tenant, stream)
        entries = [
            json.dumps({"t": r.text, "v": [round(x, _VECTOR_DIGITS) for x in r.vector], "o": owner})
            for r in items
        ]
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lpush(key, *entries)
            pipe.ltrim(key, 0, self.context_size - 1)
            pipe.expire(key, max(1, int(self.context_ttl_s)))
            await pipe.execute()

    async def buffer(self, tenant: str, items: Sequence[Buffered]) -> None:
        """Keep skipped captures until `buffer_ttl_s` from now (the oldest go past
        `buffer_max`)."""
        if not items or self.buffer_ttl_s <= 0:
            return
        key = keys.capture_buffer(tenant)
        now = time.time()
        expires = now + self.buffer_ttl_s
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", now)
            pipe.zadd(key, {json.dumps(asdict(b), sort_keys=True): expires for b in items})
            pipe.zremrangebyrank(key, 0, -(self.buffer_max + 1))
            pipe.expire(key, max(1, int(self.buffer_ttl_s)))
            await pipe.execute()

    async def skipped(self, tenant: str) -> list[tuple[bytes, Buffered]]:
        """The tenant's unexpired skipped captures (raw member, entry), oldest first."""
        key = keys.capture_buffer(tenant)
        now = time.time()
        await self.redis.zremrangebyscore(key, "-inf", now)
        out: list[tuple[bytes, Buffered]] = []
        for member in await self.redis.zrangebyscore(key, now, "+inf"):
            raw = member if isinstance(member, bytes) else str(member).encode()
            try:
                out.append((raw, Buffered(**json.loads(raw))))
            except (ValueError, TypeError):
                continue
        return out

    async def drop(self, tenant: str, members: Sequence[bytes]) -> int:
        """Remove entries (consolidation distilled them)."""
        if not members:
            return 0
        return int(await self.redis.zrem(keys.capture_buffer(tenant), *members))


async def scrub(redis: Redis, tenant: str, erased: Callable[[dict[str, Any]], bool]) -> int:
    """Remove the skipped captures and the session contexts of erased owners (`erased`
    reads an owner's fields: user_id, workspace, project); returns how many entries and
    keys went."""
    removed = 0
    key = keys.capture_buffer(tenant)
    gone: list[bytes] = []
    for member in cast(list[bytes], await redis.zrange(key, 0, -1)):
        try:
            entry = json.loads(member)
        except ValueError:
            continue
        if isinstance(entry, dict) and erased(entry):
            gone.append(member)
    if gone:
        removed += int(await redis.zrem(key, *gone))
    pattern = keys.glob_escape(keys.capture_context(tenant, "")) + "*"
    async for name in redis.scan_iter(match=pattern, count=500):
        for raw in await redis.lrange(name, 0, -1):
            try:
                owner = json.loads(raw).get("o") or {}
            except (ValueError, AttributeError):
                continue
            if erased(owner):
                removed += int(await redis.delete(name))
                break
    return removed
