"""Read path: query embedding -> hybrid candidates from Qdrant -> cognitive score -> episode
context -> PAE slots. Side effects (reinforcement, spreading activation) happen in the
sweeper, off this path."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain import affect, scoring, supersession, time_cues
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.domain.consolidation import GroupKey, record_id
from pcm_common.domain.memory import Affect, ItemView, MemoryRecord, ScoreView, State
from pcm_common.domain.visibility import audience
from pcm_common.messaging.events import STREAM_RECALLED, MemoryRecalled, RecalledItem
from pcm_common.models.affect import classify
from pcm_common.models.rerank import build_reranker, should_rerank
from pcm_common.models.sparse import encode_query
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import RECALL_STAGE_SECONDS, RERANK_OUTCOMES, get_logger
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_recall import flags as anomaly
from pcm_recall import precise as precise_cut
from pcm_recall.graph_links import GraphLinker, GraphLinks, fetch_linked
from pcm_recall.pinned import PinnedCache
from pcm_recall.prompt import render
from pcm_recall.schemas import AnomalyFlag, ContextItem, RecallIn, RecallOut
from pcm_recall.settings import RecallSettings

log = get_logger("recall")

EPISODE_SCAN = 256  # memories read per episode window when expanding seeds


class _Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        t = time.perf_counter()
        self.ms[stage] = round((t - self._t) * 1000, 3)
        RECALL_STAGE_SECONDS.labels(stage).observe(t - self._t)
        self._t = t


def visibility(req: RecallIn, include_archived: bool) -> Filter:
    """What the request sees (`audience`), in the states it asks for, created before its
    `created_before`, without episode records."""
    seen = audience(req.user_id, req.workspace, req.project)
    states = ["active", "archived"] if include_archived else ["active"]
    if req.include_superseded or supersession.asks_about_past(req.query):
        states.append("superseded")
    must: dict[str, Any] = {"state": states, **seen.must}
    ranges: dict[str, tuple[float | None, float | None]] = {}
    if req.created_before:
        # Ranges are inclusive: the largest float below the instant keeps it out.
        ranges["created_ts"] = (
            None,
            math.nextafter(as_utc(req.created_before).timestamp(), -math.inf),
        )
    # Episode records are returned whole through their seeds, not as competing candidates.
    return Filter(
        must=must, should=seen.should, must_not={"source": "consolidation"}, ranges=ranges
    )


_NOT_EPISODE_RECORDS = Filter(must_not={"source": "consolidation"})


def _created_within(flt: Filter, span: tuple[datetime, datetime]) -> Filter | None:
    """`flt` narrowed to memories created in [start, end) of `span` (and still inside any
    range `flt` had); None when nothing can be in both."""
    lo, hi = span[0].timestamp(), math.nextafter(span[1].timestamp(), -math.inf)
    old_lo, old_hi = flt.ranges.get("created_ts", (None, None))
    lo = lo if old_lo is None else max(lo, old_lo)
    hi = hi if old_hi is None else min(hi, old_hi)
    if lo > hi:
        return None
    return replace(flt, ranges={**flt.ranges, "created_ts": (lo, hi)})


def within_span(
    hits: list[ScoredPoint], inside: list[ScoredPoint], weight: float
) -> list[ScoredPoint]:
    """The candidates of a query that names a time: those of the whole store (`hits`) and
    those of the search restricted to that time (`inside`), each memory once, with the
    higher of its fused rank score overall and `weight` x its fused rank score among the
    memories of that time. So the best match written then ranks with the best match
    overall, whatever older or newer memories share its words."""
    if not inside:
        return hits
    merged = {h.id: h for h in hits}
    for p in inside:
        if p.fused is None:  # a dense-only search: the cosine, the same in both
            merged.setdefault(p.id, p)
            continue
        boosted = p.fused * weight
        have = merged.get(p.id)
        if have is None:
            merged[p.id] = replace(p, fused=boosted)
        elif have.fused is not None and boosted > have.fused:
            merged[p.id] = replace(have, fused=boosted)
    return list(merged.values())


def relevance(point: ScoredPoint, fusion_k: int) -> float:
    """Relevance in [0, 1]: the fused rank score scaled so that first place in both lists
    is 1.0, or the cosine when the search was dense only."""
    if point.fused is None:
        return max(point.score, 0.0)
    return min(point.fused / (2.0 / (fusion_k + 1)), 1.0)


class RecallService:
    def __init__(self, res: Resources, settings: RecallSettings) -> None:
        self.res = res
        self.settings = settings
        self.pinned = PinnedCache(res.vectors, settings.max_pinned)
        self.reranker = build_reranker(settings)
        self.linker = (
            GraphLinker(
                res.graph,
                # The n-gram path needs no extractor: do not build one for it.
                None if settings.graph_query_ngrams else res.extractor,
                count=self._memory_count,
                timeout_s=settings.graph_link_timeout_s,
                max_links=settings.graph_max_links,
                max_df=settings.graph_max_df,
                max_df_share=settings.graph_max_df_share,
                ngrams=settings.graph_query_ngrams,
                typed=settings.graph_typed_links,
                typed_max_df=settings.graph_typed_max_df,
            )
            if settings.graph_links
            else None
        )

    @property
    def rule(self) -> precise_cut.PreciseRule:
        return self.settings.precise_rule()

    def _default_k(self, req: RecallIn) -> int:
        if req.precision == "precise":
            return self.settings.precise_k
        return self.settings.compact_k if req.compact else self.settings.default_k

    def _precise_plan(self, top: list[ContextItem]) -> tuple[list[ContextItem], int]:
        """Precise mode's episode seeds (the strong ones, `precise.strong`) and the
        neighbours each brings on each side."""
        n = precise_cut.strong([c.score for c in top], self.rule)
        return [c for c in top[:n] if c.episode], self.settings.precise_neighbours

    async def _memory_count(self, tenant: str) -> int:
        """Memories in the tenant (N of the graph links' weights): episode records are not
        extracted into the graph, so they are not counted."""
        return await self.res.vectors.count(tenant, _NOT_EPISODE_RECORDS)

    async def recall(self, tenant: str, req: RecallIn) -> tuple[RecallOut, MemoryRecalled | None]:
        timer = _Timer()
        now = as_utc(req.now) if req.now else utcnow()
        precise = req.precision == "precise"
        k = min(req.k or self._default_k(req), self.settings.max_k)
        # The graph lookup runs while the query is embedded and searched.
        graph_task = (
            asyncio.create_task(self.linker.links(tenant, req.query)) if self.linker else None
        )
        qvec = await self.res.embedder.embed_query(req.query)
        timer.lap("embed")
        pool = scoring.pool_size(k)
        # Archived memories are searched too: a strong cue brings one back (see _score).
        flt = visibility(req, include_archived=True)
        sparse = encode_query(req.query) if self.settings.hybrid else None

        async def search(where: Filter) -> list[ScoredPoint]:
            return await self.res.vectors.search(
                tenant,
                qvec,
                limit=pool,
                flt=where,
                sparse=sparse,
                fusion_k=self.settings.fusion_k,
                prefetch=pool,
            )

        # The query names a time: the best matches written then compete with the best
        # matches of all time (`within_span`). Archived memories come back only as before
        # (`_reachable`): being first among the few written then is no strong cue.
        span = self._time_span(tenant, req, now)
        then = _created_within(visibility(req, req.include_archived), span) if span else None
        if then is None:
            hits = await search(flt)
        else:
            hits, inside = await asyncio.gather(search(flt), search(then))
            hits = within_span(hits, inside, self.settings.time_cue_weight)
        timer.lap("search")
        graph = await graph_task if graph_task else GraphLinks(ok=False, reason="disabled")
        if graph.links:
            linked = await fetch_linked(
                self.res.vectors,
                tenant,
                qvec,
                graph.links,
                exclude={h.id for h in hits},
                visible=flt,
            )
            # Memories linked as strongly as the last kept one: the closer ones win.
            cosines = {p.id: p.score for p in [*hits, *linked]}
            graph = replace(graph, links=graph.closest(cosines))
            hits = hits + [p for p in linked if p.id in graph.links]
        timer.lap("graph_join")
        # The candidates' routine memberships (a Redis round trip) are read while they are
        # scored; the flags need them for the best-ranked ones, which are among them.
        routine_of = (
            asyncio.create_task(self.res.routines.routine_of(tenant, [h.id for h in hits]))
            if self.settings.flags_enabled
            else None
        )
        rel = await self._relevance(req.query, hits, timer)
        mood = classify(req.query) if self.settings.affect_weight > 0 else None
        # Only a charged query's state counts (decided once, not per candidate).
        charged = (
            mood
            if mood is not None and affect.charge(mood, self.settings.affect_min_charge) > 0
            else None
        )
        ranked = self._score(hits, rel, now, req, graph.links, charged)
        if precise:
            head = ranked[:k]
            keep = precise_cut.kept([c.score for c in head], [c.hit.score for c in head], self.rule)
            ranked = [head[i] for i in keep]
        timer.lap("score")
        shown_texts: set[str] = set()
        if precise:  # the memories themselves: a whole consolidated session is not precise
            top = precise_cut.unique_texts([c.item() for c in ranked], _text_of, shown_texts)
        else:
            top = await self._with_episode_records(tenant, ranked, k)
        whole = {c.episode for c in top if c.metadata.get("sources")}
        taken = {c.memory_id for c in top} | {s for c in top for s in c.metadata.get("sources", [])}
        # Episode context and anomaly flags read the store independently: overlap them.
        episode, (flag_list, flags_ms) = await asyncio.gather(
            self._episode_context(
                tenant,
                [c for c in top if c.episode not in whole],
                k,
                exclude=taken,
                visible=visibility(req, self._archived_neighbours(req)),
                now=now,
                links=graph.links,
                plan=self._precise_plan(top) if precise else None,
            ),
            self._precise_flags(tenant, req, top, hits, now, routine_of)
            if precise
            else self._flags(tenant, req, top, hits, now, routine_of),
        )
        # Active pins only, seen as the recall sees memories (a user's own and everyone's).
        pins = await self.pinned.get(tenant, visibility(req, include_archived=False))
        asker = [self._pinned_item(p, now) for p in pins]
        # A pin is shown whole in the asker slot: not again as an episode neighbour.
        shown = {a.memory_id for a in asker}
        episode = [e for e in episode if e.memory_id not in shown]
        if precise:  # a text already shown (as a pin or a memory) is not shown again
            pinned = {precise_cut.text_key(a.text) for a in asker}
            top = [c for c in top if precise_cut.text_key(c.text) not in pinned]
            episode = precise_cut.unique_texts(episode, _text_of, shown_texts | pinned)
        timer.lap("context_and_flags")
        timer.ms["flags"] = flags_ms  # overlapped with the episode context read
        prompt = render(flag_list, asker, top, episode, scoring.prompt_budget_chars(k))
        timer.lap("render")
        out = RecallOut(
            anomaly_flags=flag_list,
            asker_context=asker,
            situational_context=top,
            episode_context=episode,
            prompt=prompt,
            empty=not top,
            timings_ms={**timer.ms, **graph.timings()},
            query_affect=mood,
        )
        event = None
        if top:
            event = MemoryRecalled(
                tenant=tenant,
                now=now,
                user_id=req.user_id,
                workspace=req.workspace,
                project=req.project,
                items=[
                    RecalledItem(memory_id=c.memory_id, rank=i, relevance=c.relevance)
                    for i, c in enumerate(top)
                ],
            )
        log.info("recalled", tenant=tenant, k=k, returned=len(top), timings_ms=timer.ms)
        return out, event

    async def _precise_flags(
        self,
        tenant: str,
        req: RecallIn,
        top: list[ContextItem],
        hits: list[ScoredPoint],
        now: datetime,
        routine_of: asyncio.Task[dict[str, str | None]] | None = None,
    ) -> tuple[list[AnomalyFlag], float]:
        """The flags a precise recall delivers: those the delivered memories raise (their
        own surprise, a surprise in their family, a stopped routine they belong to), and of
        those only the ones whose flagged memory is itself a candidate as close to the
        request as an answer must be (`precise_min_top_cosine`), and for a surprise, whose
        memory belongs to a regular routine (`flags.in_regular_routines`): a chat line that
        differs from loosely similar earlier lines breaks no routine. Judged as always."""
        ids = {c.memory_id for c in top}
        cosine = {h.id: h.score for h in hits}
        delivered = [h for h in hits if h.id in ids]
        flags, ms = await self._flags(
            tenant, req, top, delivered, now, routine_of, max_flags=len(hits)
        )
        floor = self.settings.precise_min_top_cosine
        near = [f for f in flags if cosine.get(f.memory_id, 0.0) >= floor]
        try:
            regular = await anomaly.in_regular_routines(
                self.res.routines, tenant, [f.memory_id for f in near if f.kind == "surprise"], now
            )
        except Exception as exc:  # flags never fail a recall
            log.warning("flags_failed", tenant=tenant, error=repr(exc))
            return [], ms
        kept = [f for f in near if f.kind != "surprise" or f.memory_id in regular]
        return kept[: anomaly.MAX_FLAGS], ms

    async def _flags(
        self,
        tenant: str,
        req: RecallIn,
        top: list[ContextItem],
        hits: list[ScoredPoint],
        now: datetime,
        routine_of: asyncio.Task[dict[str, str | None]] | None = None,
        max_flags: int = anomaly.MAX_FLAGS,
    ) -> tuple[list[AnomalyFlag], float]:
        """Surprise and stopped-routine flags for what was recalled, and the milliseconds
        they took; never fails a recall. `routine_of`: the candidates' routine memberships,
        being read since the search."""
        if not self.settings.flags_enabled:
            return [], 0.0
        started = time.perf_counter()
        ranked = [c.memory_id for c in top]
        seen = set(ranked)
        pool = [h.id for h in hits if h.id not in seen] if self.settings.flags_use_pool else []
        try:
            flags = await anomaly.compute(
                self.res.vectors,
                self.res.routines,
                tenant,
                ranked,
                {h.id: h.payload for h in hits},
                now,
                visibility(req, req.include_archived),
                pool_ids=pool,
                routine_of=await routine_of if routine_of is not None else None,
                max_flags=max_flags,
            )
            return flags, round((time.perf_counter() - started) * 1000, 3)
        except Exception as exc:
            log.warning("flags_failed", tenant=tenant, error=repr(exc))
            return [], round((time.perf_counter() - started) * 1000, 3)

    async def publish(self, event: MemoryRecalled) -> None:
        """After the response was sent: retried once on a fresh connection, and a failure
        is logged, never raised (the reinforcement is lost, the answer stands)."""
        try:
            await self.res.bus.publish_fresh(STREAM_RECALLED, [event])
        except Exception as exc:
            log.warning("recall_publish_failed", tenant=event.tenant, error=repr(exc)[:200])

    def _time_span(
        self, tenant: str, req: RecallIn, now: datetime
    ) -> tuple[datetime, datetime] | None:
        """The creation times the query names (`time_cues.window`), or None; never fails
        the recall."""
        if not self.settings.time_cues:
            return None
        try:
            return time_cues.window(req.query, now)
        except Exception as exc:
            log.warning("time_cue_failed", tenant=tenant, error=repr(exc)[:200])
            return None

    async def _relevance(self, query: str, hits: list[ScoredPoint], timer: _Timer) -> _Relevance:
        """Per candidate: the relevance used in the score and the value the floor applies to.

        With a reranker (and candidates that are not already decisive) both are its
        probability; otherwise relevance is the fused rank score and the floor applies to
        the cosine, so lexical fusion cannot smuggle in an off-topic memory. Which one it is
        decides the floor and the cue's scale, not whether a reranker is configured: a
        skipped or failed rerank leaves the fused scale.
        """
        fused = [relevance(h, self.settings.fusion_k) for h in hits]
        cosines = [h.score for h in hits]
        if self.reranker is None:
            RERANK_OUTCOMES.labels("none").inc()
            return _Relevance(fused, cosines, reranked=False)
        if not should_rerank(cosines):
            RERANK_OUTCOMES.labels("skipped").inc()
            return _Relevance(fused, cosines, reranked=False)
        try:
            probs = await self.reranker.rerank(query, [h.payload.get("text", "") for h in hits])
        except Exception as exc:  # a reranker outage degrades ranking, never the answer
            RERANK_OUTCOMES.labels("failed").inc()
            log.warning("rerank_failed", error=repr(exc))
            return _Relevance(fused, cosines, reranked=False)
        RERANK_OUTCOMES.labels("reranked").inc()
        timer.lap("rerank")
        return _Relevance(probs, probs, reranked=True)

    def _score(
        self,
        hits: list[ScoredPoint],
        rel: _Relevance,
        now: datetime,
        req: RecallIn,
        links: dict[str, float],
        mood: Affect | None = None,
    ) -> list[_Candidate]:
        if rel.reranked and self.reranker is not None:
            floor = link_floor = self.reranker.floor
        else:
            floor = self.settings.relevance_floor
            # A linked memory shares a rare entity with the query: the cosine floor may be
            # lower for it (the reranker's floor is a probability and stays as it is).
            link_floor = min(floor, self.settings.graph_link_floor)
        cue = self._cue(rel.reranked)
        ranked = [
            self._candidate(h, now, r, req, links.get(h.id, 0.0), cue, mood)
            for h, r, f in zip(hits, rel.scores, rel.floors, strict=True)
            if scoring.passes_floor(f, link_floor if h.id in links else floor)
            and self._reachable(h, r, req)
        ]
        ranked.sort(key=lambda c: c.score, reverse=True)
        return ranked

    def _candidate(
        self,
        h: ScoredPoint,
        now: datetime,
        rel: float,
        req: RecallIn,
        link: float,
        cue: tuple[float, float],
        mood: Affect | None = None,
    ) -> _Candidate:
        """A candidate's score from the few fields it needs (`ScoreView`); the whole record
        is read only if the candidate makes the answer (`_Candidate.item`)."""
        view = ScoreView.model_validate(h.payload)
        s = _strength(h, now, view)
        start, span = cue
        score = scoring.score(
            rel,
            s,
            link,
            self._scope_bonus(view.scope.value),
            cue_start=start,
            cue_span=span,
            link_weight=self.settings.graph_link_weight,
            state_bonus=self._state_bonus(mood, h),
        )
        return _Candidate(h, rel, s, score)

    def _state_bonus(self, mood: Affect | None, h: ScoredPoint) -> float:
        """State-dependent recall (pcm_common.domain.affect) for a charged query's `mood`;
        the memory's tags are read only then, so a neutral query (None) costs nothing."""
        s = self.settings
        if mood is None:
            return 0.0
        tags = Affect.model_validate(h.payload.get("affect") or {})
        return affect.bonus(mood, tags, s.affect_weight, s.affect_min_charge)

    def _reachable(self, h: ScoredPoint, rel: float, req: RecallIn) -> bool:
        """Demoted (archived) memories no longer compete on weak cues, but a strong cue
        reactivates one: a cosine of `archived_recall_min_cos`, or a relevance (the fused
        rank score: near the top of both the dense and the lexical list) of
        `archived_recall_min_rel`. `include_archived` admits them all. A recall that returns
        one reinforces it, and that makes it active again (strength.reactivates)."""
        if req.include_archived or h.payload.get("state") != "archived":
            return True
        s = self.settings
        return h.score >= s.archived_recall_min_cos or rel >= s.archived_recall_min_rel

    def _cue(self, reranked: bool) -> tuple[float, float]:
        """(start, span) of the cue's reactivation of strength on the scale of the relevance
        in use: the design's for a reranker's probability, the calibrated ones for the fused
        rank score."""
        if reranked:
            return scoring.CUE_START, scoring.CUE_SPAN
        return self.settings.fused_cue_start, self.settings.fused_cue_span

    def _archived_neighbours(self, req: RecallIn) -> bool:
        """Whether an archived memory next to a recalled seed joins the episode context:
        recalling the seed reactivates its episode (an episode record already returns its
        archived sources' text), and `include_archived` must find them there too."""
        return req.include_archived or self.settings.archived_episode_neighbours

    async def _with_episode_records(
        self, tenant: str, ranked: list[_Candidate], k: int
    ) -> list[ContextItem]:
        """The best `k` candidates as context items, with the seeds' consolidated episode
        records returned whole when short enough: a record takes the rank of its best
        source, and its sources leave the k slots to other evidence."""
        top = [c.item() for c in ranked[:k]]
        seeds = [c for c in top if c.episode][: scoring.episode_seeds(k)]
        ids = [
            record_id(
                tenant,
                GroupKey(str(c.episode), c.user_id, c.scope, c.workspace or "", c.project or ""),
            )
            for c in seeds
        ]
        found = await self.res.vectors.get(tenant, ids) if ids else []
        record_of: dict[str, MemoryRecord] = {}
        for p in found:
            if len(p.payload.get("text", "")) <= self.settings.episode_record_max_chars:
                whole = MemoryRecord.from_payload(p.payload)
                record_of.update({s: whole for s in whole.metadata.get("sources", [])})
        if not record_of:
            return top
        out: list[ContextItem] = []
        emitted: set[str] = set()
        for i, cand in enumerate(ranked):
            rec = record_of.get(cand.hit.id)
            if rec is None:
                out.append(top[i] if i < len(top) else cand.item())
            elif rec.id not in emitted:
                emitted.add(rec.id)
                out.append(
                    _context_item(rec, score=cand.score, relevance=cand.rel, strength=cand.strength)
                )
            if len(out) == k:
                break
        return out

    def _pinned_item(self, p: ScoredPoint, now: datetime) -> ContextItem:
        """A pinned memory of the asker's context: delivered whole, whatever the query."""
        rec = MemoryRecord.from_payload(p.payload)
        s = rec.strength.at(now, rec.pinned)
        return _context_item(rec, score=1.0, relevance=1.0, strength=s)

    def _scope_bonus(self, scope: str) -> float:
        if scope == "project":
            return self.settings.scope_bonus_project
        if scope == "workspace":
            return self.settings.scope_bonus_workspace
        return 0.0

    def _seeds(self, top: list[ContextItem], k: int, links: dict[str, float]) -> list[ContextItem]:
        """The best `episode_seeds(k)` memories, then `graph_seeds` more: the best-ranked
        graph-linked ones (a memory naming the query's rare entity often sits next to the
        turn that answers), topped up with the next-ranked ones."""
        cands = [c for c in top if c.episode]
        n = scoring.episode_seeds(k)
        seeds, rest = cands[:n], cands[n:]
        extra = self.settings.graph_seeds
        linked = [c for c in rest if c.memory_id in links][:extra]
        chosen = {c.memory_id for c in linked}
        others = [c for c in rest if c.memory_id not in chosen][: extra - len(linked)]
        return seeds + linked + others

    async def _tie_breaks(
        self, tenant: str, lines: list[list[tuple[str, float]]]
    ) -> dict[str, int]:
        """The `seq` of the memories that share their `created_ts` with another in the same
        timeline (a session replayed at one instant); an empty read when none does."""
        tied: list[str] = []
        for line in lines:
            count = Counter(ts for _, ts in line)
            tied += [pid for pid, ts in line if count[ts] > 1]
        if not tied:
            return {}
        points = await self.res.vectors.get(tenant, tied, fields=("seq",))
        return {p.id: int(p.payload.get("seq") or 0) for p in points}

    async def _episode_context(
        self,
        tenant: str,
        top: list[ContextItem],
        k: int,
        exclude: set[str],
        visible: Filter,
        now: datetime,
        links: dict[str, float] | None = None,
        plan: tuple[list[ContextItem], int] | None = None,
    ) -> list[ContextItem]:
        """Up to `episode_neighbours` memories on each side of the seeds (`_seeds`), from
        the same episode and within the window, in time order, not already in the answer,
        and visible to the request (an episode id does not cross scopes or users). Of the
        best-ranked `episode_answer_seeds` memories, one that asks a question also brings
        the memory after it (its answer: "Sure, I'll bring it tomorrow" names nothing the
        query does). `plan` (precise mode): the seeds and their neighbours on each side
        instead, and only those seeds may bring an answer."""
        window = timedelta(minutes=self.settings.episode_window_min).total_seconds()
        n = self.settings.episode_neighbours
        linked_n = self.settings.graph_seed_neighbours
        # Seed -> (neighbours before, neighbours after).
        spans: dict[str, tuple[int, int]] = {}
        by_episode: dict[str, list[ContextItem]] = defaultdict(list)
        seeds = plan[0] if plan else self._seeds(top, k, links or {})
        for seed in seeds:
            m = plan[1] if plan else linked_n if seed.memory_id in (links or {}) else n
            spans[seed.memory_id] = (m, m)
            by_episode[str(seed.episode)].append(seed)
        for c in [] if plan else top[: self.settings.episode_answer_seeds]:
            if c.episode and c.memory_id not in spans and _asks(c.text):
                spans[c.memory_id] = (0, 1)
                by_episode[str(c.episode)].append(c)

        def window_of(episode: str, group: list[ContextItem]) -> Filter:
            # One read per episode covering every seed's window. The episode's consolidated
            # record shares its episode and time: without the must_not it sorts in among
            # the turns and a whole session rides in as a "neighbour".
            times = [s.created_at.timestamp() for s in group]
            lo, hi = visible.ranges.get("created_ts", (None, None))
            span = (
                max(min(times) - window, lo if lo is not None else -math.inf),
                min(max(times) + window, hi if hi is not None else math.inf),
            )
            return Filter(
                must={**visible.must, "episode": episode},
                must_not={**visible.must_not, "source": "consolidation"},
                ranges={**visible.ranges, "created_ts": span},
                should=list(visible.should),
            )

        # The episodes' timelines in one batch: ids in time order, no payloads (a payload
        # read is ~35-50 us per point, and a window holds ~5x the neighbours kept).
        lines = await self.res.vectors.timelines(
            tenant,
            [window_of(e, g) for e, g in by_episode.items()],
            key="created_ts",
            limit=EPISODE_SCAN,
        )
        seq_of = await self._tie_breaks(tenant, lines)
        taken = exclude
        chosen: dict[str, None] = {}
        for group, line in zip(by_episode.values(), lines, strict=True):
            # Memories saved at the same instant keep their ingest order (seq).
            line.sort(key=lambda x: (x[1], seq_of.get(x[0], 0)))
            position = {pid: i for i, (pid, _) in enumerate(line)}
            for seed in group:
                i = position.get(seed.memory_id)
                if i is None:
                    continue
                t = seed.created_at.timestamp()
                before, after = spans[seed.memory_id]
                for pid, ts in line[max(0, i - before) : i] + line[i + 1 : i + 1 + after]:
                    if pid in taken or pid in chosen or abs(ts - t) > window:
                        continue
                    chosen[pid] = None
        # Only the chosen neighbours are read whole.
        out: dict[str, ContextItem] = {}
        for p in await self.res.vectors.get(tenant, list(chosen)) if chosen else []:
            r = ItemView.model_validate(p.payload)
            out[r.id] = _context_item(r, score=0.0, relevance=0.0, strength=_strength(p, now))
        return sorted(out.values(), key=lambda c: (c.created_at, c.seq))


@dataclass(frozen=True)
class _Candidate:
    """A scored candidate; its context item is built from the whole record on demand."""

    hit: ScoredPoint
    rel: float
    strength: float
    score: float

    def item(self) -> ContextItem:
        rec = ItemView.model_validate(self.hit.payload)
        return _context_item(rec, score=self.score, relevance=self.rel, strength=self.strength)


@dataclass(frozen=True)
class _Relevance:
    """The relevance of each candidate, the value its floor applies to, and whether both
    are a reranker's probability (else the fused rank score and the cosine)."""

    scores: list[float]
    floors: list[float]
    reranked: bool


def _strength(p: ScoredPoint, now: datetime, view: ScoreView | None = None) -> float:
    """The memory's strength at `now` (decayed since its last reinforcement)."""
    v = view or ScoreView.model_validate(p.payload)
    return v.strength.at(now, v.pinned)


def _text_of(item: ContextItem) -> str:
    return item.text


def _asks(text: str) -> bool:
    """Whether a memory ends by asking (a closing quote mark after the "?" still counts)."""
    return text.rstrip().rstrip("\"'\u201d\u2019").endswith("?")


def _context_item(
    rec: ItemView | MemoryRecord, *, score: float, relevance: float, strength: float
) -> ContextItem:
    return ContextItem(
        memory_id=rec.id,
        text=rec.text,
        created_at=rec.created_at,
        score=round(score, 6),
        relevance=round(relevance, 6),
        strength=round(strength, 6),
        scope=rec.scope.value,
        episode=rec.episode,
        metadata=rec.metadata,
        state=rec.state.value,
        superseded_by=rec.superseded_by if rec.state == State.SUPERSEDED else None,
        seq=rec.seq,
        user_id=rec.user_id,
        workspace=rec.workspace,
        project=rec.project,
    )
