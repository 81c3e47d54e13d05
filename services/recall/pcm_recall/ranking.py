"""Relevance and score: each candidate's relevance (the reranker's probability, or the fused
rank score with the floor on the cosine), its score (`pcm_common.domain.scoring`) with the
cue, scope, state and graph-link terms, and the floors that drop it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from pcm_common.domain import affect, scoring
from pcm_common.domain.memory import Affect, ItemView, ScoreView
from pcm_common.models.rerank import Reranker, should_rerank
from pcm_common.runtime.telemetry import RERANK_OUTCOMES, get_logger
from pcm_common.stores.vectors import ScoredPoint
from pcm_recall.items import context_item
from pcm_recall.schemas import ContextItem, RecallIn, ScoreTerms
from pcm_recall.settings import RecallSettings
from pcm_recall.timing import Timer

log = get_logger("recall")


def relevance(point: ScoredPoint, fusion_k: int) -> float:
    """Relevance in [0, 1]: the fused rank score scaled so that first place in both lists
    is 1.0, or the cosine when the search was dense only."""
    if point.fused is None:
        return max(point.score, 0.0)
    return min(point.fused / (2.0 / (fusion_k + 1)), 1.0)


class Ranker:
    """Relevance and score of the candidates: the reranker when it is configured and the
    candidates are not already decisive, else the fused rank score; the floors, the cue
    that restores strength, scope, state and graph-link bonuses, and which archived
    memories a cue reaches."""

    def __init__(self, settings: RecallSettings, reranker: Reranker | None) -> None:
        self.settings = settings
        self.reranker = reranker

    async def relevance(self, query: str, hits: list[ScoredPoint], timer: Timer) -> Relevance:
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
            return Relevance(fused, cosines, reranked=False)
        if not should_rerank(cosines):
            RERANK_OUTCOMES.labels("skipped").inc()
            return Relevance(fused, cosines, reranked=False)
        try:
            probs = await self.reranker.rerank(query, [h.payload.get("text", "") for h in hits])
        except Exception as exc:  # a reranker outage degrades ranking, never the answer
            RERANK_OUTCOMES.labels("failed").inc()
            log.warning("rerank_failed", error=repr(exc))
            return Relevance(fused, cosines, reranked=False)
        RERANK_OUTCOMES.labels("reranked").inc()
        timer.lap("rerank")
        return Relevance(probs, probs, reranked=True)

    def score(
        self,
        hits: list[ScoredPoint],
        rel: Relevance,
        now: datetime,
        req: RecallIn,
        links: dict[str, float],
        mood: Affect | None = None,
        feedback: Mapping[str, float] | None = None,
    ) -> list[Candidate]:
        """Candidates over their floor, best first. `feedback` (memory id -> its retrieval
        feedback term, `pcm_common.feedback`) is added to the score; a memory that feedback
        lifts is held to the graph links' lower floor, as a memory linked to the query is."""
        bias = feedback or {}
        if rel.reranked and self.reranker is not None:
            floor = link_floor = self.reranker.floor
        else:
            floor = self.settings.relevance_floor
            # A linked memory shares a rare entity with the query: the cosine floor may be
            # lower for it (the reranker's floor is a probability and stays as it is).
            link_floor = min(floor, self.settings.graph_link_floor)
        cue = self._cue(rel.reranked)
        ranked = [
            self._candidate(h, now, r, req, links.get(h.id, 0.0), cue, mood, bias.get(h.id, 0.0))
            for h, r, f in zip(hits, rel.scores, rel.floors, strict=True)
            if scoring.passes_floor(
                f, link_floor if h.id in links or bias.get(h.id, 0.0) > 0 else floor
            )
            and self.reachable(h, r, req)
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
        bias: float = 0.0,
    ) -> Candidate:
        """A candidate's score from the few fields it needs (`ScoreView`); the whole record
        is read only if the candidate makes the answer (`Candidate.item`)."""
        view = ScoreView.model_validate(h.payload)
        s = strength_at(h, now, view)
        start, span = cue
        parts = scoring.parts(
            rel,
            s,
            link,
            self._scope_bonus(view.scope.value),
            cue_start=start,
            cue_span=span,
            link_weight=self.settings.graph_link_weight,
            state_bonus=self._state_bonus(mood, h),
        )
        score = parts.total + bias
        terms = explained(rel, s, parts, bias, score) if req.explain else None
        return Candidate(h, rel, s, score, terms)

    def _state_bonus(self, mood: Affect | None, h: ScoredPoint) -> float:
        """State-dependent recall (pcm_common.domain.affect) for a charged query's `mood`;
        the memory's tags are read only then, so a neutral query (None) costs nothing."""
        s = self.settings
        if mood is None:
            return 0.0
        tags = Affect.model_validate(h.payload.get("affect") or {})
        return affect.bonus(mood, tags, s.affect_weight, s.affect_min_charge)

    def reachable(self, h: ScoredPoint, rel: float, req: RecallIn) -> bool:
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

    def _scope_bonus(self, scope: str) -> float:
        if scope == "project":
            return self.settings.scope_bonus_project
        if scope == "workspace":
            return self.settings.scope_bonus_workspace
        return 0.0


@dataclass(frozen=True)
class Candidate:
    """A scored candidate; its context item is built from the whole record on demand."""

    hit: ScoredPoint
    rel: float
    strength: float
    score: float
    terms: ScoreTerms | None = None  # asked for with `explain`

    def item(self) -> ContextItem:
        rec = ItemView.model_validate(self.hit.payload)
        item = context_item(rec, score=self.score, relevance=self.rel, strength=self.strength)
        item.terms = self.terms
        return item


def explained(
    rel: float, strength: float, parts: scoring.ScoreParts, feedback: float, score: float
) -> ScoreTerms:
    """The terms of a candidate's score, rounded as its item's score is."""

    def r(x: float) -> float:
        return round(x, 6)

    return ScoreTerms(
        relevance=r(rel),
        strength=r(strength),
        reactivated=r(parts.reactivated),
        relevance_term=r(parts.relevance_term),
        graph_link=r(parts.link),
        link_term=r(parts.link_term),
        scope_bonus=r(parts.scope_bonus),
        state_bonus=r(parts.state_bonus),
        feedback=r(feedback),
        score=r(score),
    )


@dataclass(frozen=True)
class Relevance:
    """The relevance of each candidate, the value its floor applies to, and whether both
    are a reranker's probability (else the fused rank score and the cosine)."""

    scores: list[float]
    floors: list[float]
    reranked: bool


def strength_at(p: ScoredPoint, now: datetime, view: ScoreView | None = None) -> float:
    """The memory's strength at `now` (decayed since its last reinforcement)."""
    v = view or ScoreView.model_validate(p.payload)
    return v.strength.at(now, v.pinned)
