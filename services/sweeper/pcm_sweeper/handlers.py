"""Sweeper consumers: marks judged / extracted, applies recall side effects (reinforcement of
what was recalled, spreading activation to its associates)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pcm_common.domain import activation
from pcm_common.domain.memory import MemoryRecord, Strength, as_utc
from pcm_common.events import (
    STREAM_CHANGED,
    MemoryChanged,
    MemoryExtracted,
    MemoryRecalled,
    MemoryWritten,
)
from pcm_common.extract.local import SHARED_DOCS
from pcm_common.resources import Resources
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_common.stream_batches import Outcome
from pcm_common.telemetry import get_logger
from pcm_sweeper.judging import Judgement, Judging
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper")

APPLIED_TTL_S = 7 * 86400
MAX_REINFORCED = 200  # a recall returns at most max_k items
# Entries read and handled together per consumer group (judging; extraction marks).

T = TypeVar("T")


def _reinforced_key(event_id: str, memory_id: str) -> str:
    return f"pcm:applied:recalled:{event_id}:{memory_id}"


def _spread_key(event_id: str, memory_id: str) -> str:
    return f"pcm:applied:spread:{event_id}:{memory_id}"


def _extracted_patch(event: MemoryExtracted) -> dict[str, Any]:
    return {
        "graph": {
            "extracted": True,
            "entities": event.entities,
            "extracted_at": event.emitted_at.isoformat(),
        }
    }


class SweeperHandlers:
    def __init__(self, res: Resources, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        self.judging = Judging(res, settings)

    async def on_written(self, event: MemoryWritten) -> None:
        """Surprisal judging; a failing judge leaves the memory for the periodic sweep."""
        await self.judging.on_written(event)

    async def on_written_batch(self, events: list[MemoryWritten]) -> list[Outcome]:
        """A batch read from the stream: the texts are parsed together first where this
        process also runs the local extractor (one `nlp.pipe` serves both the judge and
        the extractor); then the families are searched in one batch, the judge prepares all
        the verdicts at once (the local judge parses the family members it has not seen
        in one batch: ~a third of them are stored but not yet reached by either consumer,
        and parsing them a few at a time cost twice as much per text), and the batch is
        judged and stored together (`Judging.judge_many`)."""
        await asyncio.to_thread(SHARED_DOCS.prime, [ev.text for ev in events])
        # The batch's memories in one read per tenant instead of one read per event.
        ids: dict[str, list[str]] = {}
        for ev in events:
            ids.setdefault(ev.tenant, []).append(ev.memory_id)
        points: dict[tuple[str, str], ScoredPoint] = {}
        for tenant, memory_ids in ids.items():
            for p in await self.res.vectors.get(tenant, memory_ids, with_vectors=True):
                points[(tenant, p.id)] = p
        todo: dict[tuple[str, str], ScoredPoint] = {}
        for ev in events:
            point = points.get((ev.tenant, ev.memory_id))
            # Deleted meanwhile, or a redelivery or merged duplicate: nothing to judge.
            if point is not None and not (point.payload.get("surprisal") or {}).get("judged_at"):
                todo[(ev.tenant, ev.memory_id)] = point
        planned: dict[tuple[str, str], Judgement | BaseException] = {}
        memories = self.judging.memories(list(todo.values()))
        try:
            found = await self.judging.families([(k[0], p) for k, p in todo.items()], memories)
        except Exception as exc:  # the batch's family searches failed: each event retries
            planned = dict.fromkeys(todo, exc)
        else:
            for (key, point), family, memory in zip(todo.items(), found, memories, strict=True):
                try:
                    if isinstance(family, Exception):
                        raise family
                    if isinstance(memory, Exception):
                        raise memory
                    planned[key] = self.judging.plan(point, family, memory)
                except Exception as exc:  # a malformed payload fails its own event only
                    planned[key] = exc
        ready = [(k, j) for k, j in planned.items() if isinstance(j, Judgement)]
        await self.judging.prepare([j for _, j in ready])
        results = await self.judging.judge_many([(k[0], j) for k, j in ready])
        outcome_of: dict[tuple[str, str], Outcome] = {
            k: r for (k, _), r in zip(ready, results, strict=True) if isinstance(r, BaseException)
        }
        for k, j in planned.items():
            if isinstance(j, BaseException):
                outcome_of[k] = j  # the family search failed: the event is retried
        return [outcome_of.get((ev.tenant, ev.memory_id)) for ev in events]

    async def on_extracted_batch(self, events: list[MemoryExtracted]) -> list[Outcome]:
        """The extraction marks of a batch, one payload write per tenant."""
        by_tenant: dict[str, list[MemoryExtracted]] = {}
        for ev in events:
            by_tenant.setdefault(ev.tenant, []).append(ev)
        failed: dict[int, BaseException] = {}
        for tenant, evs in by_tenant.items():
            try:
                done = await self.res.vectors.set_payload_many(
                    tenant, [(ev.memory_id, _extracted_patch(ev)) for ev in evs]
                )
            except Exception as exc:
                failed.update((id(ev), exc) for ev in evs)
                continue
            for ev, ok in zip(evs, done, strict=True):
                if ok:
                    log.info("memory_extracted", tenant=tenant, memory_id=ev.memory_id)
        return [failed.get(id(ev)) for ev in events]

    async def on_extracted(self, event: MemoryExtracted) -> None:
        (outcome,) = await self.on_extracted_batch([event])
        if outcome is not None:
            raise outcome

    # ---- recall side effects -----------------------------------------------------------

    async def on_recalled(self, event: MemoryRecalled) -> None:
        """Reinforcement of what was recalled, then spreading activation from the top ones
        (DESIGN §3). Each (event, memory) pair is applied once, so a redelivered event
        strengthens nothing twice; the reinforcement's ΔS is kept with its marker so a
        redelivery still spreads the activation it owes."""
        now = as_utc(event.now)
        items = sorted(event.items, key=lambda i: i.rank)[:MAX_REINFORCED]
        ranked = list(dict.fromkeys(i.memory_id for i in items))
        points = {p.id: p for p in await self.res.vectors.get(event.tenant, ranked)}
        deltas: dict[str, float] = {}
        for mid in ranked:
            point = points.get(mid)
            if point is None:
                continue  # deleted since the recall
            deltas[mid] = await self._reinforce_once(event, point, now)
        await self._spread(event, now, ranked, deltas)

    async def _reinforce_once(
        self, event: MemoryRecalled, point: ScoredPoint, now: datetime
    ) -> float:
        marker = _reinforced_key(event.event_id, point.id)
        done = await self.res.redis.get(marker)
        if done is not None:
            return float(done)
        delta = await self._reinforce(event.tenant, MemoryRecord.from_payload(point.payload), now)
        await self.res.redis.set(marker, repr(delta), ex=APPLIED_TTL_S)
        return delta

    async def _reinforce(self, tenant: str, rec: MemoryRecord, now: datetime) -> float:
        if rec.pinned:
            return 0.0
        strength = rec.strength.reinforced(now, recalled=True)
        delta = strength.s_ref - rec.strength.at(strength.t_ref)
        await self._set_strength(tenant, rec, strength, now)
        log.debug("memory_reinforced", tenant=tenant, memory_id=rec.id, s_ref=strength.s_ref)
        return delta

    async def _set_strength(
        self, tenant: str, rec: MemoryRecord, strength: Strength, now: datetime
    ) -> None:
        """Writes the new strength; an archived memory it lifts back to the demotion
        threshold is reactivated in the same write, and the change is announced like its
        demotion was."""
        patch = rec.strength_patch(strength, now)
        await self.res.vectors.set_payload(tenant, rec.id, patch)
        if "state" in patch:
            await self.res.bus.publish(
                STREAM_CHANGED,
                MemoryChanged(tenant=tenant, memory_id=rec.id, change="reactivated"),
            )
            log.debug("memory_reactivated", tenant=tenant, memory_id=rec.id)

    async def _spread(
        self, event: MemoryRecalled, now: datetime, ranked: list[str], deltas: dict[str, float]
    ) -> None:
        """ΔS_j = β·w_ij·ΔS_i to the associates of the top recalled memories, found now
        from their own vectors and episodes (no stored edges)."""
        s = self.settings
        tenant = event.tenant
        top = [m for m in activation.top_recalled(ranked, s.spread_top) if deltas.get(m, 0) > 0]
        if not top:
            return
        recalled = set(ranked)
        weights: dict[str, dict[str, float]] = {}
        for point in await self.res.vectors.get(tenant, top, with_vectors=True):
            weights[point.id] = await self._associates(tenant, point, recalled)
        total = activation.spread({m: deltas[m] for m in top}, weights, beta=s.spread_beta)
        if not total:
            return
        for point in await self.res.vectors.get(tenant, sorted(total)):
            marker = _spread_key(event.event_id, point.id)
            if await self.res.redis.exists(marker):
                continue
            rec = MemoryRecord.from_payload(point.payload)
            if not rec.pinned:
                st = rec.strength
                s_ref, t_ref = activation.activate(st.s_ref, st.t_ref, st.n, now, total[point.id])
                strength = st.model_copy(update={"s_ref": s_ref, "t_ref": t_ref})
                await self._set_strength(tenant, rec, strength, now)
                log.debug("memory_activated", tenant=tenant, memory_id=rec.id, s_ref=s_ref)
            await self.res.redis.set(marker, 1, ex=APPLIED_TTL_S)

    async def _associates(
        self, tenant: str, point: ScoredPoint, recalled: set[str]
    ) -> dict[str, float]:
        s = self.settings
        rec = MemoryRecord.from_payload(point.payload)
        similar: dict[str, float] = {}
        if point.vector and any(point.vector):  # a memory awaiting repair has no neighbours
            hits = await self.res.vectors.search(
                tenant,
                point.vector,
                # Room for itself and other recalled memories, which are skipped.
                limit=s.spread_neighbours + min(len(recalled), 20) + 1,
                flt=Filter(must={"state": "active"}),
            )
            similar = activation.similar_neighbours(
                rec.id,
                ((h.id, h.score) for h in hits),
                recalled,
                limit=s.spread_neighbours,
                min_cos=s.spread_min_cos,
            )
        episode: dict[str, float] = {}
        if rec.source.value == "consolidation":
            # An episode record's associates are its sources, wherever they sit in time.
            sources = [str(x) for x in rec.metadata.get("sources", [])]
            episode = {m: s.spread_episode_weight for m in sources if m not in recalled}
        elif rec.episode:
            window = timedelta(minutes=s.spread_episode_window_min)
            t = rec.created_at.timestamp()
            mates, _ = await self.res.vectors.scroll(
                tenant,
                flt=Filter(
                    must={"episode": rec.episode, "state": "active"},
                    must_not={"source": "consolidation"},
                    ranges={"created_ts": (t - window.total_seconds(), t + window.total_seconds())},
                ),
                limit=256,
            )
            episode = activation.episode_neighbours(
                rec.id,
                rec.created_at,
                ((m.id, MemoryRecord.from_payload(m.payload).created_at) for m in mates),
                recalled,
                window=window,
                weight=s.spread_episode_weight,
            )
        return activation.merge_weights(similar, episode)
