"""Read path: query embedding -> hybrid candidates from Qdrant -> cognitive score -> episode
context -> PAE slots. Side effects (reinforcement, spreading activation) happen in the
sweeper, off this path."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime

from pcm_common.domain import affect, scoring, time_cues
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.domain.memory import Affect
from pcm_common.feedback.service import FeedbackService
from pcm_common.messaging.events import STREAM_RECALLED, MemoryRecalled, RecalledItem
from pcm_common.models.affect import classify
from pcm_common.models.rerank import build_reranker
from pcm_common.models.sparse import encode_query
from pcm_common.models.urgency import UrgencyPrototypes
from pcm_common.ports import RecallPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_recall import precise as precise_cut
from pcm_recall.associations import Associator
from pcm_recall.candidates import NOT_EPISODE_RECORDS, created_within, visibility, within_span
from pcm_recall.context import EpisodeContext, pinned_item
from pcm_recall.flags import RecallFlags
from pcm_recall.graph_links import GraphLinker, GraphLinks, fetch_linked
from pcm_recall.items import text_of
from pcm_recall.pinned import PinnedCache
from pcm_recall.prompt import render
from pcm_recall.ranking import Candidate, Ranker
from pcm_recall.schemas import AnomalyFlag, Association, ContextItem, RecallIn, RecallOut
from pcm_recall.settings import RecallSettings
from pcm_recall.timing import Timer

log = get_logger("recall")


class RecallService:
    def __init__(self, res: RecallPorts, settings: RecallSettings) -> None:
        self.res = res
        self.settings = settings
        self.pinned = PinnedCache(res.vectors, settings.max_pinned)
        self.reranker = build_reranker(settings)
        self.ranker = Ranker(settings, self.reranker)
        self.context = EpisodeContext(res, settings)
        self.flags = RecallFlags(res, settings)
        self.associator = Associator(res, settings)
        self.urgency = UrgencyPrototypes(res.embedder)
        self.feedback = FeedbackService(res.redis, res.vectors, res.bus, settings)
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
        return await self.res.vectors.count(tenant, NOT_EPISODE_RECORDS)

    async def recall(self, tenant: str, req: RecallIn) -> tuple[RecallOut, MemoryRecalled | None]:
        timer = Timer()
        now = as_utc(req.now) if req.now else utcnow()
        k = min(req.k or self._default_k(req), self.settings.max_k)
        # The graph lookup runs while the query is embedded and searched.
        graph_task = (
            asyncio.create_task(self.linker.links(tenant, req.query)) if self.linker else None
        )
        qvec = await self.res.embedder.embed_query(req.query)
        timer.lap("embed")
        # The feedback terms near this query (one GET while nothing changed) meanwhile.
        bias_task = asyncio.create_task(self.feedback.bias(tenant, req.user_id, qvec))
        # Archived memories are searched too: a strong cue brings one back (see `Ranker.score`).
        flt = visibility(req, include_archived=True)
        hits = await self._candidates(tenant, req, qvec, flt, scoring.pool_size(k), now)
        timer.lap("search")
        graph = await graph_task if graph_task else GraphLinks(ok=False, reason="disabled")
        graph, hits = await self._join_graph(tenant, qvec, graph, hits, flt)
        bias, hits = await self._join_feedback(tenant, qvec, bias_task, hits, flt)
        timer.lap("graph_join")
        routine_of = self._routines_read(tenant, hits)
        ranked, mood, charge = await self._rank(req, qvec, hits, graph, now, k, timer, bias)
        timer.lap("score")
        shown_texts: set[str] = set()
        top = await self._situational(tenant, req, ranked, k, shown_texts)
        episode, (flag_list, flags_ms) = await self._context_and_flags(
            tenant, req, top, hits, graph, now, k, routine_of
        )
        asker, top, episode = await self._asker(tenant, req, now, top, episode, shown_texts)
        timer.lap("context_and_flags")
        timer.ms["flags"] = flags_ms  # overlapped with the episode context read
        associations: list[Association] | None = None
        if req.mode == "associative":
            associations = await self._associate(tenant, req, asker, top, episode)
            timer.lap("associations")
        prompt = render(
            flag_list, asker, top, episode, scoring.prompt_budget_chars(k), associations
        )
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
            query_charge=charge,
            associations=associations or [],
        )
        out.recall_id = await self._remember(tenant, req, now, qvec, out)
        event = _recalled_event(tenant, req, now, top)
        log.info("recalled", tenant=tenant, k=k, returned=len(top), timings_ms=timer.ms)
        return out, event

    def _routines_read(
        self, tenant: str, hits: list[ScoredPoint]
    ) -> asyncio.Task[dict[str, str | None]] | None:
        """The candidates' routine memberships (a Redis round trip), read while they are
        scored: the flags need them for the best-ranked ones, which are among them."""
        if not self.settings.flags_enabled:
            return None
        return asyncio.create_task(self.res.routines.routine_of(tenant, [h.id for h in hits]))

    async def _candidates(
        self,
        tenant: str,
        req: RecallIn,
        qvec: list[float],
        flt: Filter,
        pool: int,
        now: datetime,
    ) -> list[ScoredPoint]:
        """The hybrid search's candidates, and when the query names a time, those written
        then merged in (`within_span`)."""
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
        # (`Ranker.reachable`): being first among the few written then is no strong cue.
        span = self._time_span(tenant, req, now)
        then = created_within(visibility(req, req.include_archived), span) if span else None
        if then is None:
            return await search(flt)
        hits, inside = await asyncio.gather(search(flt), search(then))
        return within_span(hits, inside, self.settings.time_cue_weight)

    async def _join_graph(
        self,
        tenant: str,
        qvec: list[float],
        graph: GraphLinks,
        hits: list[ScoredPoint],
        flt: Filter,
    ) -> tuple[GraphLinks, list[ScoredPoint]]:
        """The graph-linked memories the search did not find, added to the candidates; the
        links kept are the closest of those linked as strongly."""
        if not graph.links:
            return graph, hits
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
        return graph, hits + [p for p in linked if p.id in graph.links]

    async def _join_feedback(
        self,
        tenant: str,
        qvec: list[float],
        bias_task: asyncio.Task[dict[str, float]],
        hits: list[ScoredPoint],
        flt: Filter,
    ) -> tuple[dict[str, float], list[ScoredPoint]]:
        """The feedback terms of this query, and the memories feedback lifts for it (a
        `missed` one) that the search did not find, added to the candidates if visible.
        A failure leaves the recall as without feedback."""
        try:
            bias = await bias_task
        except Exception as exc:
            log.warning("feedback_terms_failed", tenant=tenant, error=repr(exc)[:200])
            return {}, hits
        lifted = {m: b for m, b in bias.items() if b > 0}
        if not lifted:
            return bias, hits
        found = await fetch_linked(
            self.res.vectors, tenant, qvec, lifted, exclude={h.id for h in hits}, visible=flt
        )
        return bias, hits + found

    async def _remember(
        self, tenant: str, req: RecallIn, now: datetime, qvec: list[float], out: RecallOut
    ) -> str | None:
        """Records the recall for feedback (its id, or None when feedback is off or Redis
        failed: the answer stands without it)."""
        if not self.feedback.enabled:
            return None
        delivered = [
            c.memory_id
            for c in [*out.situational_context, *out.episode_context, *out.asker_context]
        ]
        try:
            return await self.feedback.remember(
                tenant,
                at=now,
                user_id=req.user_id,
                workspace=req.workspace,
                project=req.project,
                query_vec=qvec,
                delivered=delivered,
            )
        except Exception as exc:
            log.warning("feedback_record_failed", tenant=tenant, error=repr(exc)[:200])
            return None

    async def _rank(
        self,
        req: RecallIn,
        qvec: list[float],
        hits: list[ScoredPoint],
        graph: GraphLinks,
        now: datetime,
        k: int,
        timer: Timer,
        bias: dict[str, float] | None = None,
    ) -> tuple[list[Candidate], Affect | None, float | None]:
        """Relevance, then the cognitive score (with the query's state when it is charged),
        then for precise recall the cut to what clearly answers; and the query's affect
        and charge."""
        rel = await self.ranker.relevance(req.query, hits, timer)
        mood = classify(req.query) if self.settings.affect_weight > 0 else None
        state = await self._state(req.query, qvec, mood)
        charge = (
            affect.charge(state, self.settings.affect_min_charge) if state is not None else None
        )
        # Only a charged query's state counts (decided once, not per candidate).
        charged = state if charge else None
        ranked = self.ranker.score(hits, rel, now, req, graph.links, charged, bias)
        if req.precision == "precise":
            head = ranked[:k]
            keep = precise_cut.kept([c.score for c in head], [c.hit.score for c in head], self.rule)
            ranked = [head[i] for i in keep]
        return ranked, mood, charge

    async def _state(self, query: str, qvec: list[float], mood: Affect | None) -> Affect | None:
        """The query's state for state-dependent recall: its tags with arousal raised to
        its urgency (`affect.urgency`: word cues or closeness to urgent situations), so
        that only urgency charges; or the tags as they are with the prototypes off."""
        s = self.settings
        if mood is None or not s.affect_urgency_prototypes:
            return mood
        level = affect.urgency(
            mood.arousal,
            await self.urgency.margin(qvec),
            offset=s.affect_urgency_offset,
            span=s.affect_urgency_span,
            looks_back=affect.retrospective(query),
        )
        return affect.urgent_state(mood, level)

    async def _situational(
        self, tenant: str, req: RecallIn, ranked: list[Candidate], k: int, shown_texts: set[str]
    ) -> list[ContextItem]:
        """The situational slot: precise recall's memories themselves, each text once (a
        whole consolidated session is not precise), else the top k with episode records."""
        if req.precision == "precise":
            return precise_cut.unique_texts([c.item() for c in ranked], text_of, shown_texts)
        return await self.context.with_records(tenant, ranked, k)

    async def _context_and_flags(
        self,
        tenant: str,
        req: RecallIn,
        top: list[ContextItem],
        hits: list[ScoredPoint],
        graph: GraphLinks,
        now: datetime,
        k: int,
        routine_of: asyncio.Task[dict[str, str | None]] | None,
    ) -> tuple[list[ContextItem], tuple[list[AnomalyFlag], float]]:
        """The episode context around the delivered memories and the anomaly flags they
        raise (with the flags' milliseconds): they read the store independently, so they
        overlap."""
        precise = req.precision == "precise"
        whole = {c.episode for c in top if c.metadata.get("sources")}
        taken = {c.memory_id for c in top} | {s for c in top for s in c.metadata.get("sources", [])}
        return await asyncio.gather(
            self.context.around(
                tenant,
                [c for c in top if c.episode not in whole],
                k,
                exclude=taken,
                visible=visibility(req, self.context.archived_neighbours(req)),
                now=now,
                links=graph.links,
                plan=self._precise_plan(top) if precise else None,
            ),
            self.flags.precise(tenant, req, top, hits, now, routine_of)
            if precise
            else self.flags.recalled(tenant, req, top, hits, now, routine_of),
        )

    async def _asker(
        self,
        tenant: str,
        req: RecallIn,
        now: datetime,
        top: list[ContextItem],
        episode: list[ContextItem],
        shown_texts: set[str],
    ) -> tuple[list[ContextItem], list[ContextItem], list[ContextItem]]:
        """The asker slot (the pins), and the situational and episode slots without what it
        shows already."""
        # Active pins only, seen as the recall sees memories (a user's own and everyone's).
        pins = await self.pinned.get(tenant, visibility(req, include_archived=False))
        asker = [pinned_item(p, now) for p in pins]
        # A pin is shown whole in the asker slot: not again as an episode neighbour.
        shown = {a.memory_id for a in asker}
        episode = [e for e in episode if e.memory_id not in shown]
        if req.precision == "precise":  # a text already shown (pin or memory) is not again
            pinned = {precise_cut.text_key(a.text) for a in asker}
            top = [c for c in top if precise_cut.text_key(c.text) not in pinned]
            episode = precise_cut.unique_texts(episode, text_of, shown_texts | pinned)
        return asker, top, episode

    async def _associate(
        self,
        tenant: str,
        req: RecallIn,
        asker: list[ContextItem],
        top: list[ContextItem],
        episode: list[ContextItem],
    ) -> list[Association]:
        """Associative recall's additions: what spreading from the best delivered memories
        reaches that the answer does not show (an episode record shows its sources)."""
        shown = {c.memory_id for c in [*asker, *top, *episode]}
        shown |= {s for c in top for s in c.metadata.get("sources", [])}
        return await self.associator.reach(
            tenant, top, shown, visibility(req, req.include_archived)
        )

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


def _recalled_event(
    tenant: str, req: RecallIn, now: datetime, top: list[ContextItem]
) -> MemoryRecalled | None:
    """What the sweeper reinforces after the response: the delivered memories with their
    ranks, or None when nothing was delivered."""
    if not top:
        return None
    return MemoryRecalled(
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
