"""Erasing everything of one user, workspace or project (`DELETE /v1/memories?user_id=...`,
issue 37): the points (memories, the episode records made of them, and every distilled fact
with an erased source, `domain.fact_sources`), with their vectors, payloads and history;
their graph facts; their routine-index entries; their strengths held in Redis; the stream
entries that carry their text or name them; the Redis keys that hold their ids; and the
recall replicas' pinned caches.

It is a job that can be resumed. Its record (`keys.erasure`: by tenant and the digest of
what is erased, so the record holds no name) keeps its status and counts; the ids it found
are kept in a set beside it before anything is deleted, so a run that stopped halfway (a
crash, a store that went away) is finished by the next call with the same target: every
step reads the current state and removes what is left, so repeating one removes nothing
twice. Other owners' memories are never read for deletion: the scan is a filter on the
erased fields, and stream entries go only when they name an erased memory.

Tombstones (`pcm_common.stores.redis.tombstones`: ids and deletion times, nothing else)
stay: graph repair needs them to remove any fact an extraction already under way writes
after the erasure.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, cast

from pcm_common.data.derived_facts import derived_from
from pcm_common.data.erasure_scrub import Asker, scrub_keys, scrub_streams
from pcm_common.domain import distil
from pcm_common.domain.fact_sources import Action, after_deletion
from pcm_common.domain.memory import Scope, Source
from pcm_common.messaging.events import MemoryChanged
from pcm_common.messaging.outbox import owe, pay_or_leave_owed
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import capture_buffer, fields, keys
from pcm_common.stores.redis.tombstones import record as tombstone
from pcm_common.stores.vectors import Filter, ScoredPoint

log = get_logger("erasure")

COUNTS = (
    "memories",
    "episode_records",
    "graph_memories",
    "routine_memories",
    "stream_entries",
    "redis_keys",
    "facts",
)
_FIELDS = ("source", "kind", "scope", "workspace", "project", "user_id")
_PAGE = 256
_LOCK_MS = 120_000
_KEEP_RECORD_S = 7 * 86_400  # a finished job's record (status and counts) is kept a week


class ErasureRunning(Exception):
    """Another call is running this erasure now."""


@dataclass(frozen=True)
class Target:
    """What to erase: every memory whose payload has all the given fields (at least one)."""

    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None

    def __post_init__(self) -> None:
        if not any(vars(self).values()):
            raise ValueError("name a user_id, a workspace or a project")

    def must(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v}

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.must(), sort_keys=True).encode()).hexdigest()[:32]


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Erasure:
    def __init__(self, res: Resources) -> None:
        self.res = res

    def _key(self, tenant: str, target: Target) -> str:
        return keys.erasure(tenant, target.digest())

    async def run(self, tenant: str, target: Target) -> dict[str, Any]:
        """Erase `target` of `tenant` (or finish an erasure that stopped); returns the job:
        its id, whether it resumed an earlier run, and what it erased (counts over all the
        runs of this job). Raises `ErasureRunning` while another call runs it."""
        key = self._key(tenant, target)
        token = uuid.uuid4().hex
        redis = self.res.redis
        if not await redis.set(keys.erasure_lock(key), token, nx=True, px=_LOCK_MS):
            raise ErasureRunning(target.digest())
        try:
            job = {_s(k): _s(v) for k, v in (await redis.hgetall(key)).items()}
            resumed = job.get("status") == "running"
            if job.get("status") != "running":  # a new job (or this target again, later)
                job = {"id": uuid.uuid4().hex, "status": "running", "started_at": str(time.time())}
                await redis.delete(key)
                await redis.hset(key, mapping=fields(job))
                await redis.persist(key)
            await self._erase(tenant, target, key)
            await redis.hset(key, mapping={"status": "done", "finished_at": str(time.time())})
            await redis.delete(keys.erasure_ids(key), keys.erasure_owners(key))
            await redis.expire(key, _KEEP_RECORD_S)
            counts = await redis.hmget(key, list(COUNTS))
        finally:
            held = await redis.get(keys.erasure_lock(key))
            if held is not None and _s(held) == token:
                await redis.delete(keys.erasure_lock(key))
        erased = {c: int(v or 0) for c, v in zip(COUNTS, counts, strict=True)}
        log.info("erasure_done", tenant=tenant, job=job["id"], resumed=resumed, **erased)
        return {"job_id": job["id"], "status": "done", "resumed": resumed, "erased": erased}

    async def _erase(self, tenant: str, target: Target, key: str) -> None:
        await self._delete_points(tenant, target, key)
        await self._delete_derived_facts(tenant, key)
        ids = {_s(m) for m in await self.res.redis.smembers(keys.erasure_ids(key))}
        await self._count(key, "graph_memories", await self._drop_facts(tenant, ids))
        asker = Asker(**target.must())
        await self._count(key, "stream_entries", await scrub_streams(self.res.redis, ids, asker))
        episode_keys = [_s(k) for k in await self.res.redis.smembers(keys.erasure_owners(key))]
        removed = await scrub_keys(self.res.redis, tenant, ids, episode_keys, asker)
        removed += await capture_buffer.scrub(self.res.redis, tenant, asker.asked)
        await self._count(key, "redis_keys", removed)
        # Once more after the streams are clean: an extraction or a judgment that was under
        # way wrote facts or routine entries of an erased memory after the first pass.
        await self._count(key, "graph_memories", await self._drop_facts(tenant, ids))
        await self._count(key, "routine_memories", await self._forget_routines(tenant, ids))
        if ids:
            await self._drop_caches(tenant, key)

    async def _delete_points(self, tenant: str, target: Target, key: str) -> None:
        """Page through the erased points, first page each time (each one is deleted before
        the next is read): ids kept in the job's set, tombstoned, their facts and routine
        entries removed, then the points themselves."""
        flt = Filter(must=target.must())
        redis = self.res.redis
        while True:
            await redis.pexpire(keys.erasure_lock(key), _LOCK_MS)
            page, _ = await self.res.vectors.scroll(tenant, flt=flt, limit=_PAGE, fields=_FIELDS)
            if not page:
                return
            owners = {
                keys.episode_stream(
                    tenant,
                    str(p.payload.get("scope") or Scope.GLOBAL.value),
                    p.payload.get("workspace"),
                    p.payload.get("project"),
                    p.payload.get("user_id"),
                )
                for p in page
            }
            await redis.sadd(keys.erasure_owners(key), *owners)
            await self._delete_page(tenant, key, page)

    async def _delete_page(self, tenant: str, key: str, page: list[ScoredPoint]) -> None:
        """Delete these points of the erasure: ids kept in the job's set first, tombstoned,
        their graph facts and routine entries removed, then the points, counted by kind."""
        redis = self.res.redis
        ids = [p.id for p in page]
        await redis.sadd(keys.erasure_ids(key), *ids)
        await tombstone(redis, tenant, ids)
        await self._count(key, "graph_memories", await self._drop_facts(tenant, set(ids)))
        await self._count(key, "routine_memories", await self._forget_routines(tenant, ids))
        derived = {p.id for p in page if p.payload.get("source") == Source.CONSOLIDATION}
        facts = {p.id for p in page if p.payload.get("kind") == distil.KIND}
        deleted = await self.res.vectors.delete(tenant, ids)
        if not deleted:
            raise RuntimeError(f"erasure: the vector store deleted none of {len(ids)} points")
        await self._count(key, "facts", len(facts))
        await self._count(key, "episode_records", len(derived - facts))
        await self._count(key, "memories", deleted - len(derived))

    async def _delete_derived_facts(self, tenant: str, key: str) -> None:
        """The facts drawn from an erased memory that the scan did not select: another
        owner's fields (a global memory that names the erased workspace gives a global
        fact), or a source merged in while the scan ran. Read again on every run, from
        the job's set of erased ids, so a stopped run is finished by the next."""
        ids = {_s(m) for m in await self.res.redis.smembers(keys.erasure_ids(key))}
        if not ids:
            return
        found = await derived_from(self.res, tenant, sorted(ids), fields=(*_FIELDS, "sources"))
        gone = [
            p
            for p in found
            if after_deletion(
                [str(s) for s in p.payload.get("sources") or []], ids, erasure=True
            ).action
            is Action.DROP
        ]
        for i in range(0, len(gone), _PAGE):
            await self._delete_page(tenant, key, gone[i : i + _PAGE])
            log.info(
                "erasure_facts_dropped",
                tenant=tenant,
                memory_ids=[p.id for p in gone[i : i + _PAGE]],
            )

    async def _drop_facts(self, tenant: str, ids: set[str]) -> int:
        batch = sorted(ids)
        dropped = 0
        for i in range(0, len(batch), 500):
            dropped += await self.res.graph.delete_memories(tenant, batch[i : i + 500])
        return dropped

    async def _forget_routines(self, tenant: str, ids: Collection[str]) -> int:
        found = await self.res.routines.routine_of(tenant, list(ids))
        placed = [m for m, routine in found.items() if routine]
        for memory_id in placed:
            await self.res.routines.forget(tenant, memory_id)
        return len(placed)

    async def _drop_caches(self, tenant: str, key: str) -> None:
        """Recall replicas drop the tenant's pinned cache on any change event; the event
        names the job, not an erased memory (its id would outlive the erasure in the
        stream). Owed first, as every change event is (`pcm_common.messaging.outbox`)."""
        job = _s(cast(bytes, await self.res.redis.hget(key, "id")) or b"")
        event = MemoryChanged(tenant=tenant, memory_id=job, change="deleted")
        await owe(self.res.redis, [event])
        await pay_or_leave_owed(self.res, [event])  # left owed: the outbox sends it

    async def _count(self, key: str, name: str, n: int) -> None:
        if n:
            await self.res.redis.hincrby(key, name, n)
