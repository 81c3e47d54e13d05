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
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from pcm_common.domain import affect
from pcm_common.domain import consolidation as cons
from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import (
    GraphInfo,
    Importance,
    MemoryRecord,
    Source,
    Strength,
    Surprisal,
    text_hash,
)
from pcm_common.domain.strength import should_demote
from pcm_common.messaging.bus import trim_dead_letters, trim_processed
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.messaging.outbox import owe, pay, publish_owed
from pcm_common.models.sparse import encode_document
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import JOB_RUNS, get_logger
from pcm_common.stores.redis import keys, scripts, tombstones
from pcm_common.stores.redis.job_runs import Trigger
from pcm_common.stores.redis.locks import release
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorPoint, usable_vector
from pcm_sweeper.archiving import archive, restore
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
_IMPORTANCE_ORDER = {Importance.LOW: 0, Importance.NORMAL: 1, Importance.HIGH: 2}


class Jobs:
    def __init__(self, res: SweeperPorts, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        # name -> (job, scheduled interval in seconds)
        self.judging = Judging(res, settings)
        self.governance = Governance(res)
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
                log.error("job_failed", job=name, tenant=tenant, error=repr(exc)[:300])
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
                    log.error("job_failed", job=name, error=repr(exc))
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

    # ---- consolidation -------------------------------------------------------------------

    async def consolidate(self, tenant: str, now: datetime) -> int:
        """One episode record per qualifying episode (pcm_common.domain.consolidation):
        created, rewritten when its sources changed, removed when fewer than the minimum
        sources remain (a source was deleted or superseded). Sources are never touched."""
        s = self.settings
        groups, sources, records = await self._episode_groups(tenant)
        changed = 0
        wanted: set[str] = set()
        for key, members in groups.items():
            rid = cons.record_id(tenant, key)
            if len(members) >= s.consolidation_min_members:
                wanted.add(rid)  # keep an existing record while its episode is still growing
            if not cons.qualifies(
                members,
                now,
                min_members=s.consolidation_min_members,
                settle=timedelta(hours=s.consolidation_settle_h),
            ):
                continue
            existing = records.get(rid)
            if existing is not None and cons.is_current(
                existing.payload.get("metadata", {}).get("sources"),
                existing.payload.get("text"),
                members,
            ):
                continue
            await self._write_record(tenant, rid, key, members, sources, existing, now)
            changed += 1
        return changed + await self._drop_records(
            tenant, [rid for rid in records if rid not in wanted]
        )

    async def _episode_groups(
        self, tenant: str
    ) -> tuple[
        dict[cons.GroupKey, list[cons.Member]], dict[str, MemoryRecord], dict[str, ScoredPoint]
    ]:
        """The tenant's consolidation candidates grouped by episode and owner, the candidate
        records by id, and the existing episode records by id."""
        groups: dict[cons.GroupKey, list[cons.Member]] = defaultdict(list)
        sources: dict[str, MemoryRecord] = {}
        records: dict[str, ScoredPoint] = {}
        async for points in self.res.vectors.pages(tenant):
            for p in points:
                rec = MemoryRecord.from_payload(p.payload)
                if rec.source == Source.CONSOLIDATION:
                    records[p.id] = p
                    continue
                if not cons.is_candidate(
                    source=rec.source.value,
                    state=rec.state.value,
                    pinned=rec.pinned,
                    episode=rec.episode,
                ):
                    continue
                assert rec.episode is not None
                key = cons.GroupKey(
                    episode=rec.episode,
                    user_id=rec.user_id,
                    scope=rec.scope.value,
                    workspace=rec.workspace or "",
                    project=rec.project or "",
                )
                groups[key].append(cons.Member(id=rec.id, text=rec.text, created_at=rec.created_at))
                sources[rec.id] = rec
        return groups, sources, records

    async def _drop_records(self, tenant: str, stale: list[str]) -> int:
        """Episode records no episode wants any more, deleted (tombstoned, and announced
        through the outbox); how many."""
        if not stale:
            return 0
        await tombstones.record(self.res.redis, tenant, stale)
        gone = [MemoryChanged(tenant=tenant, memory_id=rid, change="deleted") for rid in stale]
        await owe(self.res.redis, gone)  # made up for if the publish fails (outbox)
        await self.res.vectors.delete(tenant, stale)
        await pay(self.res, gone)
        return len(stale)

    async def _write_record(
        self,
        tenant: str,
        rid: str,
        key: cons.GroupKey,
        members: list[cons.Member],
        sources: dict[str, MemoryRecord],
        existing: ScoredPoint | None,
        now: datetime,
    ) -> None:
        text = cons.render(members)
        ids = cons.source_ids(members)
        recs = [sources[i] for i in ids]
        if existing is not None:
            # The record has its own life (recalls reinforced it): only its content changes.
            rec = MemoryRecord.from_payload(existing.payload)
            rec.version += 1
        else:
            rec = MemoryRecord(
                id=rid,
                tenant=tenant,
                user_id=key.user_id,
                scope=recs[0].scope,
                workspace=key.workspace,
                project=key.project,
                text=text,
                text_hash=text_hash(text),
                created_at=cons.first_created(members),
                ingested_at=now,
                strength=self._initial_strength(recs, now),
                episode=key.episode,
                source=Source.CONSOLIDATION,
            )
        _fill_record(rec, text, members, recs, ids, now)
        vec = await self.res.embedder.embed_one(text)
        await self.res.vectors.upsert(
            [
                VectorPoint(
                    id=rid, vector=vec, payload=rec.to_payload(), sparse=encode_document(text)
                )
            ]
        )
        log.info(
            "episode_consolidated",
            tenant=tenant,
            memory_id=rid,
            episode=key.episode,
            sources=len(ids),
            version=rec.version,
        )

    @staticmethod
    def _initial_strength(recs: list[MemoryRecord], now: datetime) -> Strength:
        """As strong as its strongest source is now, with its savings (n)."""
        current = [r.strength.at(now) for r in recs]
        recalled = [r.strength.last_recalled_at for r in recs if r.strength.last_recalled_at]
        return Strength(
            s_ref=max(current),
            t_ref=now,
            n=max(r.strength.n for r in recs),
            last_recalled_at=max(recalled) if recalled else None,
        )

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


def _fill_record(
    rec: MemoryRecord,
    text: str,
    members: list[cons.Member],
    recs: list[MemoryRecord],
    ids: list[str],
    now: datetime,
) -> None:
    """An episode record's content from its sources (`recs`, whose ids are `ids`)."""
    rec.text, rec.text_hash = text, text_hash(text)
    rec.created_at = cons.first_created(members)
    rec.importance = max((r.importance for r in recs), key=_IMPORTANCE_ORDER.__getitem__)
    rec.figures = list(dict.fromkeys(f for r in recs for f in r.figures))
    rec.affect = affect.blend([r.affect for r in recs])
    rec.metadata = {**rec.metadata, "sources": ids, "consolidated_at": now.isoformat()}
    # A derived record: the graph already holds its sources' facts, and surprisal is
    # judged per source, so neither stage should process (or repair) it.
    rec.graph = GraphInfo(
        extracted=True,
        entities=sorted({e for r in recs for e in r.graph.entities}),
        extracted_at=now,
    )
    rec.surprisal = Surprisal(judged_at=now)
