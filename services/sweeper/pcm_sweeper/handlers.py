"""Sweeper consumers: marks judged / extracted, applies recall side effects (reinforcement of
what was recalled, spreading activation to its associates)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from pcm_common.domain import activation, visibility
from pcm_common.domain.clock import as_utc
from pcm_common.domain.memory import MemoryRecord, StrengthView
from pcm_common.domain.visibility import audience
from pcm_common.extract.parsing import SHARED_DOCS
from pcm_common.messaging import outbox
from pcm_common.messaging.events import (
    MemoryChanged,
    MemoryExtracted,
    MemoryRecalled,
    MemoryWritten,
)
from pcm_common.messaging.stream_batches import Outcome
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.foreground import FOREGROUND
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import keys
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery
from pcm_sweeper.judgement import Judgement
from pcm_sweeper.judging import Judging
from pcm_sweeper.reconsolidation import Reconsolidation
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper")

APPLIED_TTL_S = 7 * 86400
MAX_REINFORCED = 200  # a recall returns at most max_k items

T = TypeVar("T")


@dataclass(frozen=True)
class _StrengthWrite:
    """One memory's strength update of a recall event and its marker value (`patch`
    None: nothing to write, a pinned memory; the marker is still set)."""

    memory_id: str
    patch: dict[str, Any] | None
    value: str


def _extracted_patch(event: MemoryExtracted) -> dict[str, Any]:
    return {
        "graph": {
            "extracted": True,
            "entities": event.entities,
            "extracted_at": event.emitted_at.isoformat(),
        }
    }


class SweeperHandlers:
    def __init__(self, res: SweeperPorts, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        self.judging = Judging(res, settings)
        self.reconsolidation = Reconsolidation(res, settings)

    async def on_written(self, event: MemoryWritten) -> None:
        """Surprisal judging; a failing judge leaves the memory for the periodic sweep."""
        await self.judging.on_written(event)

    async def on_written_batch(self, events: list[MemoryWritten]) -> list[Outcome]:
        """A batch read from the stream: the texts are parsed together first where this
        process also runs the local extractor (one `nlp.pipe` serves both the judge and
        the extractor); then the families are searched in one batch, the judge prepares all
        the verdicts at once (the local judge parses the family members it has not seen
        in one batch: docs/decisions/0030-parse-once-in-batches.md), and the batch is
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
            kinships = await self.judging.kinship(
                [
                    (key[0], point, family if isinstance(family, list) else [])
                    for (key, point), family in zip(todo.items(), found, strict=True)
                ]
            )
        except Exception as exc:  # the batch's searches failed: each event retries
            planned = dict.fromkeys(todo, exc)
        else:
            for (key, point), family, memory, kinship in zip(
                todo.items(), found, memories, kinships, strict=True
            ):
                try:
                    if isinstance(family, Exception):
                        raise family
                    if isinstance(memory, Exception):
                        raise memory
                    planned[key] = self.judging.plan(point, family, memory, kinship)
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
                    log.info(
                        "memory_extracted",
                        request_id=ev.request_id,
                        tenant=tenant,
                        memory_id=ev.memory_id,
                    )
        return [failed.get(id(ev)) for ev in events]

    # ---- recall side effects -----------------------------------------------------------

    async def on_recalled(self, event: MemoryRecalled) -> None:
        """Reinforcement of what was recalled, then spreading activation from the top ones
        (DESIGN §3). Each (event, memory) pair is applied once, so a redelivered event
        strengthens nothing twice; the reinforcement's ΔS is kept with its marker so a
        redelivery still spreads the activation it owes. Each phase reads its markers in
        one MGET and the strengths in one store read, and writes them in one store call
        (`_write_strengths`): a Redis round trip each way and a store call per memory
        were most of what a recall's side effects cost. The one gap: a process killed
        outright between a phase's writes and its markers leaves that phase (at most its
        ~50 memories) to be reinforced again on redelivery, a slightly stronger memory,
        never a lost one."""
        now = as_utc(event.now)
        await self.reconsolidation.on_recalled(event)  # what it delivered is labile now
        await self._yield()
        items = sorted(event.items, key=lambda i: i.rank)[:MAX_REINFORCED]
        ranked = list(dict.fromkeys(i.memory_id for i in items))
        deltas = await self._reinforce(event, ranked, now)
        await self._spread(event, now, ranked, deltas)

    async def _reinforce(
        self, event: MemoryRecalled, ranked: list[str], now: datetime
    ) -> dict[str, float]:
        """ΔS of each recalled memory still stored: the one kept with its marker where the
        event was applied to it before, else that of the reinforcement written now."""
        tenant = event.tenant
        key = keys.applied("recalled", event.event_id)
        marks = await self.res.redis.hmget(key, ranked) if ranked else []
        stored = await self.res.vectors.get(tenant, ranked, fields=StrengthView.FIELDS)
        points = {p.id: p for p in stored}
        deltas: dict[str, float] = {}
        todo: list[_StrengthWrite] = []
        for mid, mark in zip(ranked, marks, strict=True):
            point = points.get(mid)
            if point is None:
                continue  # deleted since the recall
            if mark is not None:
                deltas[mid] = float(mark)
                continue
            view = StrengthView.model_validate(point.payload)
            patch: dict[str, Any] | None = None
            delta = 0.0
            if not view.pinned:
                strength = view.strength.reinforced(now, recalled=True)
                delta = strength.s_ref - view.strength.at(strength.t_ref)
                patch = view.strength_patch(strength, now)
                log.debug("memory_reinforced", tenant=tenant, memory_id=mid, s_ref=strength.s_ref)
            deltas[mid] = delta
            todo.append(_StrengthWrite(mid, patch, repr(delta)))
        await self._write_strengths(tenant, key, todo)
        return deltas

    async def _yield(self) -> None:
        """Let a recall being served in this process go first (bounded: side effects are
        delayed, never starved; a sweeper in its own process never waits)."""
        s = self.settings
        await FOREGROUND.wait_idle(s.side_effects_yield_s, s.side_effects_quiet_s)

    async def _write_strengths(self, tenant: str, key: str, todo: list[_StrengthWrite]) -> None:
        """The strength patches in one store call (with the strength overlay, the default,
        one Redis write; the Qdrant Edge adapter splits a direct write into short calls
        itself), then the markers of all of them in one write to the phase's hash `key`.
        An archived memory that a patch lifts back to the demotion threshold is
        reactivated by the same write, and the change is announced like its demotion was."""
        writes = [(w, w.patch) for w in todo if w.patch is not None]
        if writes:
            await self._yield()
            lifted = [
                MemoryChanged(tenant=tenant, memory_id=w.memory_id, change="reactivated")
                for w, patch in writes
                if "state" in patch
            ]
            await outbox.owe(self.res.redis, lifted)
            await self.res.vectors.set_payload_many(
                tenant, [(w.memory_id, patch) for w, patch in writes]
            )
            await outbox.pay_or_leave_owed(self.res, lifted)
        if todo:
            async with self.res.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={w.memory_id: w.value for w in todo})
                pipe.expire(key, APPLIED_TTL_S)
                await pipe.execute()

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
        await self._yield()
        points = await self.res.vectors.get(tenant, top, with_vectors=True)
        seen = audience(event.user_id, event.workspace, event.project)
        weights = await self._associates(tenant, points, recalled, seen)
        total = activation.spread({m: deltas[m] for m in top}, weights, beta=s.spread_beta)
        if not total:
            return
        ids = sorted(total)
        key = keys.applied("spread", event.event_id)
        marks = await self.res.redis.hmget(key, ids)
        fresh = [mid for mid, mark in zip(ids, marks, strict=True) if mark is None]
        if not fresh:
            return
        todo: list[_StrengthWrite] = []
        for point in await self.res.vectors.get(tenant, fresh, fields=StrengthView.FIELDS):
            view = StrengthView.model_validate(point.payload)
            patch: dict[str, Any] | None = None
            if not view.pinned:
                st = view.strength
                s_ref, t_ref = activation.activate(st.s_ref, st.t_ref, st.n, now, total[point.id])
                strength = st.model_copy(update={"s_ref": s_ref, "t_ref": t_ref})
                patch = view.strength_patch(strength, now)
                log.debug("memory_activated", tenant=tenant, memory_id=point.id, s_ref=s_ref)
            todo.append(_StrengthWrite(point.id, patch, "1"))
        await self._write_strengths(tenant, key, todo)

    async def _associates(
        self, tenant: str, points: list[ScoredPoint], recalled: set[str], seen: Filter
    ) -> dict[str, dict[str, float]]:
        """Each top memory's associates with their weights, among the active memories the
        asker sees (`seen`: one user's recall strengthens nothing of another's): its
        similarity neighbours (one batch of searches for ids and scores only: the payloads
        of ~25 hits each were most of a search's cost) and its episode mates (one batch of
        timelines: ids and creation times)."""
        s = self.settings
        recs = [MemoryRecord.from_payload(p.payload) for p in points]
        # A memory awaiting repair has no vector, hence no neighbours.
        vectors = {p.id: p.vector for p in points if p.vector and any(p.vector)}
        found = iter(await self._similar_hits(tenant, points, vectors, recalled, seen))
        window = timedelta(minutes=s.spread_episode_window_min)
        mates_of = await self._episode_mates(tenant, recs, window, seen)
        weights: dict[str, dict[str, float]] = {}
        for point, rec in zip(points, recs, strict=True):
            similar: dict[str, float] = {}
            if point.id in vectors:
                similar = activation.similar_neighbours(
                    rec.id,
                    ((h.id, h.score) for h in next(found)),
                    recalled,
                    limit=s.spread_neighbours,
                    min_cos=s.spread_min_cos,
                )
            episode = self._episode_weights(rec, mates_of, recalled, window)
            weights[point.id] = activation.merge_weights(similar, episode)
        return weights

    async def _similar_hits(
        self,
        tenant: str,
        points: list[ScoredPoint],
        vectors: dict[str, list[float]],
        recalled: set[str],
        seen: Filter,
    ) -> list[list[ScoredPoint]]:
        """The nearest active memories of each top memory that has a vector, in its own
        group, as ids and scores."""
        payloads = {p.id: p.payload for p in points}
        return await self.res.vectors.search_many(
            [
                SearchQuery(
                    tenant,
                    vector,
                    # Room for itself and other recalled memories, which are skipped.
                    limit=self.settings.spread_neighbours + min(len(recalled), 20) + 1,
                    # Associates of the seed's own group only (`visibility.peers`).
                    flt=seen.with_must(state="active", **visibility.peers(payloads[mid])),
                )
                for mid, vector in vectors.items()
            ],
            fields=(),
        )

    async def _episode_mates(
        self, tenant: str, recs: list[MemoryRecord], window: timedelta, seen: Filter
    ) -> dict[str, list[tuple[str, float]]]:
        """The episode mates of the top memories, as ids with their created_ts in one batch
        (no payloads: a payload read cost ~35-50 us per mate whatever fields were asked)."""
        in_episode = [r for r in recs if r.source.value != "consolidation" and r.episode]
        lines = await self.res.vectors.timelines(
            tenant,
            [_episode_filter(r, window, seen) for r in in_episode],
            key="created_ts",
            limit=256,
        )
        return {r.id: line for r, line in zip(in_episode, lines, strict=True)}

    def _episode_weights(
        self,
        rec: MemoryRecord,
        mates_of: dict[str, list[tuple[str, float]]],
        recalled: set[str],
        window: timedelta,
    ) -> dict[str, float]:
        """A memory's episode associates: an episode record's sources, else its episode
        mates within the window."""
        weight = self.settings.spread_episode_weight
        if rec.source.value == "consolidation":
            # An episode record's associates are its sources, wherever they sit in time.
            sources = [str(x) for x in rec.metadata.get("sources", [])]
            return {m: weight for m in sources if m not in recalled}
        if rec.id in mates_of:
            return activation.episode_neighbours(
                rec.id,
                rec.created_at,
                # created_ts is created_at.timestamp() (MemoryRecord.to_payload), from
                # which fromtimestamp gives created_at back to the microsecond: the
                # window is compared exactly as on the records.
                ((mid, datetime.fromtimestamp(ts, UTC)) for mid, ts in mates_of[rec.id]),
                recalled,
                window=window,
                weight=weight,
            )
        return {}


def _episode_filter(rec: MemoryRecord, window: timedelta, seen: Filter) -> Filter:
    """The other active memories of `rec`'s episode saved within `window` of it that the
    asker sees (`seen`)."""
    t, w = rec.created_at.timestamp(), window.total_seconds()
    owner = rec.model_dump(include=set(visibility.OWNER_FIELDS))  # not the whole record
    flt = seen.with_must(episode=rec.episode, state="active", **visibility.peers(owner))
    flt.must_not["source"] = "consolidation"
    flt.ranges["created_ts"] = (t - w, t + w)
    return flt
