"""Scheduled lifecycle jobs: demotion, consolidation, repair, governance.

Safe with several sweeper replicas: every job runs per tenant under a Redis lock
(`keys.job_lock`), so two replicas never run the same job on the same tenant
at once, and the scheduler takes a per-interval slot so a tenant's job runs once per
interval across all replicas. Every job is idempotent, so a job cut short is simply run
again. `now` may be simulated (POST /v1/jobs/{name} with `now`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import (
    MemoryRecord,
    Source,
)
from pcm_common.domain.strength import should_demote
from pcm_common.messaging.bus import trim_dead_letters, trim_processed
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryWritten
from pcm_common.messaging.outbox import publish_owed
from pcm_common.models.sparse import encode_document
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import JOB_RUNS, describe_error, get_logger
from pcm_common.stores.redis import keys, scripts
from pcm_common.stores.redis.job_runs import Trigger
from pcm_common.stores.redis.locks import release
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorPoint, usable_vector
from pcm_sweeper.archiving import archive, restore
from pcm_sweeper.consolidation import Consolidation
from pcm_sweeper.governance import Governance
from pcm_sweeper.graph_repair import remove_orphan_facts, republish_unextracted
from pcm_sweeper.judging import Judging
from pcm_sweeper.run_log import logged
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper.jobs")

Job = Callable[[str, datetime], Awaitable[int]]

# The loops' heartbeat names (/healthz names a stalled one).
SCHEDULER = "scheduler"
OUTBOX = "outbox"


class Jobs:
    def __init__(self, res: SweeperPorts, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        # name -> (job, scheduled interval in seconds)
        self.judging = Judging(res, settings)
        self.governance = Governance(res)
        self.consolidation = Consolidation(res, settings)
        self.jobs: dict[str, Job] = {
            "demotion": self.demote,
            "consolidation": self.consolidate,
            "repair": self.repair,
            "surprisal": self.judging.sweep,
            "graph_repair": self.graph_repair,
            "routines": self.routines,
            "governance": self.governance.enforce,
            "strength_fold": self.fold_strengths,
        }
        self.intervals: dict[str, float] = {
            "demotion": settings.demotion_interval_s,
            "consolidation": settings.consolidation_interval_s,
            "repair": settings.repair_interval_s,
            "surprisal": settings.surprisal_interval_s,
            "graph_repair": settings.repair_interval_s,
            "routines": settings.repair_interval_s,
            "governance": settings.governance_interval_s,
            "strength_fold": settings.strength_fold_interval_s,
        }
        self._tasks: list[asyncio.Task[None]] = []

    async def tenants(self) -> list[str]:
        raw = await self.res.redis.smembers(keys.TENANTS)
        return sorted(t.decode() if isinstance(t, bytes) else t for t in raw)

    # ---- running under locks -----------------------------------------------------------

    async def run(
        self, name: str, now: datetime | None = None, tenant: str | None = None
    ) -> int | None:
        """Run one job for one tenant, or for every tenant. Returns how many memories it
        changed; None when `tenant` was given and another run holds its lock (with every
        tenant, tenants locked elsewhere are skipped: that run covers them)."""
        at = now or utcnow()
        if tenant is not None:
            return await self._run_locked(name, tenant, at, "request", now)
        done = 0
        for t in await self.tenants():
            done += await self._run_locked(name, t, at, "request", now) or 0
        return done

    async def _run_locked(
        self,
        name: str,
        tenant: str,
        at: datetime,
        trigger: Trigger = "schedule",
        simulated: datetime | None = None,
    ) -> int | None:
        token = uuid.uuid4().hex
        key = keys.job_lock(name, tenant)
        if not await self.res.redis.set(key, token, nx=True, ex=self.settings.lock_ttl_s):
            return None
        # A job may outlast the lock's TTL (a first governance or consolidation run over a
        # large tenant): the lock is extended while the job runs, so another replica never
        # starts the same job alongside; a replica that dies stops extending it.
        keeper = asyncio.create_task(self._keep_lock(key, token))
        try:
            job = self.jobs[name](tenant, at)
            changed = await logged(self.res.redis, tenant, name, trigger, simulated, job)
            log.info("job_done", job=name, tenant=tenant, changed=changed, now=at.isoformat())
            return changed
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
            await release(self.res.redis, [key], token)

    async def _keep_lock(self, key: str, token: str) -> None:
        ttl = self.settings.lock_ttl_s
        while True:
            await asyncio.sleep(max(ttl / 3, 0.1))
            try:
                if not await self.res.redis.eval(scripts.EXTEND_LOCK, 1, key, token, ttl):
                    log.warning("job_lock_lost", key=key)
                    return
            except Exception as exc:  # Redis briefly away: try again at the next beat
                log.warning("job_lock_extend_failed", key=key, error=repr(exc))

    async def run_scheduled(self, name: str) -> int:
        """One scheduler tick for `name`: each tenant whose interval slot is free runs; one
        tenant's failure is counted and logged, and the others still run (the failed one
        is retried at its next slot)."""
        done = 0
        ttl = max(1, math.ceil(self.intervals[name]))
        for tenant in await self.tenants():
            self.res.heartbeats.beat(SCHEDULER)
            slot = keys.job_slot(name, tenant)
            if not await self.res.redis.set(slot, 1, nx=True, ex=ttl):
                continue
            try:
                changed = await self._run_locked(name, tenant, utcnow())
            except Exception as exc:
                JOB_RUNS.labels(name, "failed").inc()
                log.error("job_failed", job=name, tenant=tenant, error=describe_error(exc))
                continue
            JOB_RUNS.labels(name, "locked" if changed is None else "ok").inc()
            done += changed or 0
        return done

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(), name=SCHEDULER),
            asyncio.create_task(self._outbox(), name=OUTBOX),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.res.heartbeats.forget(task.get_name())
        self._tasks = []

    async def _outbox(self) -> None:
        """Events owed by writes whose publish failed (`pcm_common.messaging.outbox`), on a shorter
        beat than the scheduler's: their memories wait for the graph meanwhile."""
        while True:
            await self.res.heartbeats.idle(OUTBOX, self.settings.outbox_interval_s)
            try:
                await publish_owed(self.res, self.settings.outbox_grace_s)
            except Exception as exc:  # Redis away: the notes wait for the next beat
                log.warning("outbox_failed", error=repr(exc)[:200])

    async def _loop(self) -> None:
        while True:
            # Beats while it waits and between tenants (`run_scheduled`): /healthz sees a
            # job that never returns, not the minute between ticks.
            await self.res.heartbeats.idle(SCHEDULER, self.settings.job_interval_s)
            for name in self.jobs:
                try:
                    await self.run_scheduled(name)
                except Exception as exc:  # Redis away: the tick is retried at the next one
                    JOB_RUNS.labels(name, "failed").inc()
                    log.error("job_failed", job=name, error=describe_error(exc))
            try:
                await self.run_idle()
            except Exception as exc:  # tried again at the next tick
                log.error("job_failed", job="consolidation", trigger="idle", error=repr(exc))
            if self.settings.stream_trim:
                self.res.heartbeats.beat(SCHEDULER)
                try:
                    dropped = await trim_processed(self.res.redis)
                    dead = await trim_dead_letters(
                        self.res.redis, self.settings.dead_letter_keep_days
                    )
                    if dropped or dead:
                        log.info("streams_trimmed", dropped=dropped, dead_letters=dead)
                except Exception as exc:  # tried again at the next tick
                    log.error("stream_trim_failed", error=repr(exc))

    async def run_idle(self) -> int:
        """Consolidation for each tenant quiet for `consolidation_idle_s` since its last
        write (`keys.last_write`), once per such quiet spell (`keys.idle_consolidated`)."""
        idle_s = self.settings.consolidation_idle_s
        if idle_s <= 0:
            return 0
        done = 0
        now = utcnow()
        for tenant in await self.tenants():
            self.res.heartbeats.beat(SCHEDULER)
            last = await self.res.redis.get(keys.last_write(tenant))
            if last is None or now.timestamp() - float(last) < idle_s:
                continue
            mark = keys.idle_consolidated(tenant)
            if await self.res.redis.get(mark) == last:
                continue
            changed = await self._run_locked("consolidation", tenant, now, "idle")
            if changed is not None:
                await self.res.redis.set(mark, last)
                done += changed
        return done

    # ---- demotion ------------------------------------------------------------------------

    async def demote(self, tenant: str, now: datetime) -> int:
        """DESIGN §3: S < 0.05 and not recalled for 90 days -> `archived` (still searchable
        with include_archived); forgetting never deletes. A page's weak memories are read
        again just before they are written, and once more after: a recall's reinforcement
        that landed meanwhile (the sweeper applies them concurrently) keeps its memory
        active instead of being overwritten by the demotion."""
        changed = 0
        async for points in self.res.vectors.pages(
            tenant, flt=Filter(must={"state": "active", "pinned": False})
        ):
            weak = [p.id for p in points if _demotable(p, now)]
            if not weak:
                continue
            weak = [
                p.id
                for p in await self.res.vectors.get(tenant, weak)
                if p.payload.get("state") == "active" and _demotable(p, now)
            ]
            for mid in weak:
                await archive(self.res, tenant, mid, reason="demotion")
            again = await self.res.vectors.get(tenant, weak) if weak else []
            overtaken = [
                p.id
                for p in again
                if p.payload.get("state") == "archived" and not _demotable(p, now)
            ]
            for mid in overtaken:
                await restore(self.res, tenant, mid, reason="recalled during demotion")
            changed += len(weak) - len(overtaken)
        return changed

    async def fold_strengths(self, tenant: str, now: datetime) -> int:
        """Strength updates kept outside the payloads written into them
        (`pcm_common.stores.redis.strength_overlay`); `now` plays no part."""
        return await self.res.vectors.fold_strengths(tenant)

    # ---- consolidation (`pcm_sweeper.consolidation`) -------------------------------------

    async def consolidate(self, tenant: str, now: datetime) -> int:
        return await self.consolidation.run(tenant, now)

    # ---- repair --------------------------------------------------------------------------

    async def repair(self, tenant: str, now: datetime) -> int:
        """Generic repair of memories whose vectors or downstream processing are missing:

        - a missing or zero dense vector (or one of the wrong size) is re-embedded;
        - a memory not judged `repair_grace_s` after ingest is published again on
          `pcm.memory.written` (consumers are idempotent), at most once per grace period so
          a failing consumer is not flooded.
        Missing graph extraction is the `graph_repair` job's (one owner, one republish).
        """
        grace = timedelta(seconds=self.settings.repair_grace_s)
        dim = self.settings.embedding_dim
        repaired = 0
        async for points in self.res.vectors.pages(tenant, with_vectors=True):
            broken = [p for p in points if not usable_vector(p.vector, dim)]
            repaired += await self._reembed(tenant, [p.id for p in broken])
            for p in points:
                rec = MemoryRecord.from_payload(p.payload)
                if rec.source == Source.CONSOLIDATION or rec.ingested_at > now - grace:
                    continue
                if rec.surprisal.judged_at is not None:
                    continue
                once = keys.judge_republished(tenant, rec.id)
                ttl = max(1, math.ceil(grace.total_seconds()))
                if not await self.res.redis.set(once, 1, nx=True, ex=ttl):
                    continue
                await self.res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec, "repair"))
                repaired += 1
        return repaired

    async def routines(self, tenant: str, now: datetime) -> int:
        """Rebuild the routine index from the stored families once: for memories judged
        before it existed, or after Redis lost its data. Judging keeps it current after."""
        if await self.res.routines.built(tenant):
            return 0
        placed = await self.judging.rebuild_routines(tenant)
        await self.res.routines.mark_built(tenant)
        return placed

    async def graph_repair(self, tenant: str, now: datetime) -> int:
        """Memories never extracted (or missing from the graph) are published again; facts
        of memories that no longer exist are removed."""
        grace_s = self.settings.repair_grace_s
        republished = await republish_unextracted(self.res, tenant, now, grace_s)
        return republished + await remove_orphan_facts(self.res, tenant)

    async def _reembed(self, tenant: str, ids: list[str]) -> int:
        if not ids:
            return 0
        # Re-read right before the upsert (which replaces the payload) so a concurrent
        # payload change between the scan and now is not undone.
        fresh = await self.res.vectors.get(tenant, ids)
        if not fresh:
            return 0
        texts = [MemoryRecord.from_payload(p.payload).text for p in fresh]
        vectors = await self.res.embedder.embed(texts)
        await self.res.vectors.upsert(
            [
                VectorPoint(id=p.id, vector=v, payload=p.payload, sparse=encode_document(t))
                for p, v, t in zip(fresh, vectors, texts, strict=True)
            ]
        )
        log.info("vectors_repaired", tenant=tenant, count=len(fresh))
        return len(fresh)


def _demotable(p: ScoredPoint, now: datetime) -> bool:
    """Weak and unused for 90 days (`should_demote`), whatever state the point is in."""
    rec = MemoryRecord.from_payload(p.payload)
    st = rec.strength
    return should_demote(
        st.at(now), st.last_recalled_at, st.t_ref, now, rec.pinned, ingested_at=rec.ingested_at
    )
