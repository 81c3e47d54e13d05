"""Retrieval feedback in Redis (`keys.feedback_*`): each recall's record for
`PCM_FEEDBACK_RECALL_TTL_S`, the cue terms feedback left (capped per tenant), the signals
given on memories without a recall, and a version counter that tells recall replicas to
reload the terms.

The record keeps the query's vector (float16, base64), not its text: a query may hold what
the write firewall would refuse to store, and only its vector is compared later.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from redis.asyncio import Redis

from pcm_common.stores.redis import keys


def pack_vector(vec: Sequence[float]) -> str:
    """A vector as base64 float16 (768 bytes for 384 dims: the cosine it gives differs
    from the float32 one by ~1e-3, far below the cue's `near`)."""
    return base64.b64encode(np.asarray(vec, dtype=np.float16).tobytes()).decode()


def unpack_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float16).astype(np.float32)


class RecallRecord(BaseModel):
    """What a recall delivered, to whom and for which cue; and the signals given on it."""

    recall_id: str
    at: datetime
    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None
    cue: str  # `pack_vector` of the query's embedding
    delivered: list[str]
    signals: dict[str, str] = Field(default_factory=dict)


class CueTerms(BaseModel):
    """One recall's cue terms: for recalls by `user_id` whose query is near `cue`."""

    user_id: str | None = None
    cue: str
    terms: dict[str, float]


class FeedbackStore:
    def __init__(self, redis: Redis, *, ttl_s: int, max_cues: int) -> None:
        self.redis = redis
        self.ttl_s = ttl_s
        self.max_cues = max_cues

    async def remember(self, tenant: str, rec: RecallRecord) -> None:
        await self.redis.set(
            keys.feedback_recall(tenant, rec.recall_id), rec.model_dump_json(), ex=self.ttl_s
        )

    async def record(self, tenant: str, recall_id: str) -> RecallRecord | None:
        raw = await self.redis.get(keys.feedback_recall(tenant, recall_id))
        return None if raw is None else RecallRecord.model_validate_json(raw)

    async def save(self, tenant: str, rec: RecallRecord, terms: dict[str, float]) -> None:
        """The record with its new signals (its TTL kept), its cue terms, the version
        bumped; past `max_cues` the tenant's oldest terms are dropped."""
        cue = CueTerms(user_id=rec.user_id, cue=rec.cue, terms=terms)
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(
            keys.feedback_recall(tenant, rec.recall_id),
            rec.model_dump_json(),
            keepttl=True,
            xx=True,
        )
        if terms:
            pipe.hset(keys.feedback_cues(tenant), rec.recall_id, cue.model_dump_json())
            pipe.zadd(keys.feedback_order(tenant), {rec.recall_id: rec.at.timestamp()})
        else:
            pipe.hdel(keys.feedback_cues(tenant), rec.recall_id)
            pipe.zrem(keys.feedback_order(tenant), rec.recall_id)
        pipe.incr(keys.feedback_version(tenant))
        pipe.zcard(keys.feedback_order(tenant))
        *_, count = await pipe.execute()
        if int(count) > self.max_cues:
            await self._trim(tenant, int(count) - self.max_cues)

    async def _trim(self, tenant: str, extra: int) -> None:
        old = await self.redis.zpopmin(keys.feedback_order(tenant), extra)
        ids = [pair[0] for pair in old if isinstance(pair, tuple | list)]  # (member, score)
        if ids:
            await self.redis.hdel(keys.feedback_cues(tenant), *ids)

    async def memory_signal(self, tenant: str, memory_id: str) -> str | None:
        raw = await self.redis.hget(keys.feedback_memory(tenant), memory_id)
        return None if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)

    async def set_memory_signal(self, tenant: str, memory_id: str, signal: str) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.feedback_memory(tenant), memory_id, signal)
        pipe.incr(keys.feedback_version(tenant))
        await pipe.execute()

    async def version(self, tenant: str) -> int:
        raw = await self.redis.get(keys.feedback_version(tenant))
        return int(raw or 0)

    async def load(self, tenant: str) -> tuple[int, list[CueTerms], dict[str, str]]:
        """The version, every cue term and every memory signal of the tenant, read at once."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.get(keys.feedback_version(tenant))
        pipe.hvals(keys.feedback_cues(tenant))
        pipe.hgetall(keys.feedback_memory(tenant))
        ver, cues, memory = await pipe.execute()
        return (
            int(ver or 0),
            [CueTerms.model_validate_json(c) for c in cues],
            {_text(k): _text(v) for k, v in memory.items()},
        )


def _text(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v


async def scrub(
    redis: Redis, tenant: str, ids: Collection[str], asked: Callable[[dict[str, Any]], bool]
) -> int:
    """Erasure (`pcm_common.data.erasure_scrub`): the tenant's recall records and cue terms
    of an erased asker (`asked` on the record's user, workspace, project) or naming an
    erased memory, and the erased memories' signals. Returns how many went."""
    removed = 0
    gone_recalls: list[str] = []
    async for name in redis.scan_iter(match=keys.feedback_recall_pattern(tenant), count=500):
        raw = await redis.get(name)
        if raw is None:
            continue
        rec = RecallRecord.model_validate_json(raw)
        if asked(rec.model_dump(include={"user_id", "workspace", "project"})) or (
            set(rec.delivered) | set(rec.signals)
        ) & set(ids):
            gone_recalls.append(rec.recall_id)
            removed += int(await redis.delete(name))
    cues = await redis.hgetall(keys.feedback_cues(tenant))
    for rid_raw, raw in cues.items():
        rid = rid_raw.decode() if isinstance(rid_raw, bytes) else str(rid_raw)
        cue = CueTerms.model_validate_json(raw)
        if rid in gone_recalls or asked({"user_id": cue.user_id}) or set(cue.terms) & set(ids):
            removed += int(await redis.hdel(keys.feedback_cues(tenant), rid))
            await redis.zrem(keys.feedback_order(tenant), rid)
    if ids:
        removed += int(await redis.hdel(keys.feedback_memory(tenant), *ids))
    if removed:
        await redis.incr(keys.feedback_version(tenant))
    return removed
