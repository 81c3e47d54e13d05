"""Which memories are labile (reconsolidation, `pcm_common.domain.reconsolidation`): a
memory a recall delivered may be rewritten by newer information for `labile_s` seconds,
at most once per cooldown, and one recall's memories at most `max_per_recall` times in all.

Keys (`keys.labile*`, one tenant's under one hash tag): a string per labile memory naming
the recall that made it labile, with the window as its TTL (a later recall makes it
labile again, for its own window); a cooldown string per rewritten memory; a counter per
recall. Expiry does the forgetting: nothing here needs a sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from redis.asyncio import Redis

from pcm_common.stores.redis import keys, scripts

# A feedback request (`wrong`) makes a memory labile under its own id with this prefix:
# the rewrite then needs no change cue (`reconsolidation.judge(wrong=True)`).
WRONG = "wrong:"


class Claim(IntEnum):
    """`Lability.claim`'s answers (the claim script's return values)."""

    CLAIMED = 1
    NOT_LABILE = 0
    COOLING = -1
    SPENT = -2


@dataclass(frozen=True)
class LabilityRules:
    labile_s: float = 600.0
    cooldown_s: float = 60.0
    max_per_recall: int = 20


def _s(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class Lability:
    def __init__(self, redis: Redis, rules: LabilityRules) -> None:
        self.redis = redis
        self.rules = rules

    async def mark(self, tenant: str, memory_ids: Sequence[str], by: str) -> None:
        """`memory_ids` are labile from now for the window, on behalf of `by` (a recall's
        event id, or `WRONG` + a feedback request's)."""
        if not memory_ids:
            return
        ttl = max(1, int(self.rules.labile_s * 1000))
        async with self.redis.pipeline(transaction=False) as pipe:
            for mid in memory_ids:
                pipe.set(keys.labile(tenant, mid), by, px=ttl)
            await pipe.execute()

    async def labile(self, tenant: str, memory_ids: Sequence[str]) -> dict[str, str]:
        """Which of `memory_ids` are labile now, with who made them so (one MGET: the keys
        share the tenant's slot)."""
        if not memory_ids:
            return {}
        got = await self.redis.mget([keys.labile(tenant, m) for m in memory_ids])
        return {m: by for m, raw in zip(memory_ids, got, strict=True) if (by := _s(raw))}

    async def claim(self, tenant: str, memory_id: str, by: str) -> Claim:
        """Take one rewrite of `memory_id`, labile on behalf of `by`: atomically, it must
        still be so, out of its cooldown, and within `by`'s rewrites; the cooldown starts."""
        r = self.rules
        got = await self.redis.eval(
            scripts.CLAIM_REWRITE,
            3,
            keys.labile(tenant, memory_id),
            keys.labile_cooldown(tenant, memory_id),
            keys.labile_budget(tenant, by),
            by,
            max(1, int(r.cooldown_s * 1000)),
            r.max_per_recall,
            max(1, int(r.labile_s * 1000)),
        )
        return Claim(int(got))

    async def release(self, tenant: str, memory_id: str) -> None:
        """A claimed rewrite that failed: its cooldown goes, so the retry may claim again."""
        await self.redis.delete(keys.labile_cooldown(tenant, memory_id))
