"""The floor and the cue follow the relevance actually produced (Ranker.score): a
configured reranker that skipped a recall (decisive candidates) or failed leaves the
fused scale, whose floor applies to the cosine."""

from __future__ import annotations

from datetime import UTC, datetime

from pcm_common.domain import scoring
from pcm_common.stores.vectors import ScoredPoint
from pcm_recall.ranking import Relevance
from pcm_recall.schemas import RecallIn
from tests.unit.test_recall_episode_context import ranker, record

NOW = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)


class ProbabilityReranker:
    floor = 0.5  # a probability: far above what a fused rank score or a cosine reads


def hits() -> list[ScoredPoint]:
    return [
        ScoredPoint(id=f"m{i}", score=cos, payload=record(i).to_payload())
        for i, cos in [(1, 0.62), (2, 0.33), (3, 0.2)]
    ]


def scored(reranked: bool, rels: list[float], floors: list[float]) -> dict[str, float]:
    svc = ranker(ProbabilityReranker())
    rel = Relevance(rels, floors, reranked=reranked)
    return {c.hit.id: c.score for c in svc.score(hits(), rel, NOW, RecallIn(query="q"), {})}


def test_skipped_rerank_keeps_the_cosine_floor_and_the_fused_cue() -> None:
    got = scored(False, [0.4, 0.35, 0.9], [0.62, 0.33, 0.2])
    # Cosine floor 0.30 (not the reranker's 0.5): m2 stays, m3 is off-topic however ranked.
    assert set(got) == {"m1", "m2"}
    s = ranker().settings
    for mid, rel in [("m1", 0.4), ("m2", 0.35)]:
        strength = next(h for h in hits() if h.id == mid).payload["strength"]["s_ref"]
        fused = scoring.score(
            rel,
            strength,
            0.0,
            0.0,
            cue_start=s.fused_cue_start,
            cue_span=s.fused_cue_span,
            link_weight=s.graph_link_weight,
        )
        assert abs(got[mid] - fused) < 0.01  # decay over one day is tiny


def test_reranked_uses_the_probability_floor_and_the_design_cue() -> None:
    got = scored(True, [0.9, 0.45, 0.6], [0.9, 0.45, 0.6])
    assert set(got) == {"m1", "m3"}  # the reranker's floor 0.5
    design = scoring.score(
        0.6, 0.6, 0.0, 0.0, cue_start=scoring.CUE_START, cue_span=scoring.CUE_SPAN
    )
    assert abs(got["m3"] - design) < 0.01


class _Timer:
    def lap(self, stage: str) -> None:
        pass


class ScriptedReranker:
    """Answers `probs`, or raises `error`; counts its calls."""

    floor = 0.5

    def __init__(self, probs: list[float] | None = None, error: Exception | None = None):
        self.probs, self.error, self.calls = probs, error, 0

    async def rerank(self, query: str, texts: list[str]) -> list[float]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.probs is not None and len(texts) == len(self.probs)
        return self.probs


async def relevance_with(reranker: ScriptedReranker | None, cosines: list[float]) -> Relevance:
    svc = ranker(reranker)
    pts = [
        ScoredPoint(id=f"m{i}", score=c, payload={"text": f"t{i}"}, fused=0.1 / (i + 1))
        for i, c in enumerate(cosines)
    ]
    return await svc.relevance("q", pts, _Timer())  # type: ignore[arg-type]


async def test_relevance_without_a_reranker_is_the_fused_score_floored_on_the_cosine() -> None:
    rel = await relevance_with(None, [0.7, 0.5])
    assert rel.reranked is False and rel.floors == [0.7, 0.5]
    assert rel.scores[0] > rel.scores[1]  # the fused rank score, scaled


async def test_relevance_gates_and_degrades() -> None:
    # Decisive candidates (top 0.95, far ahead): the reranker is not asked.
    skipped = ScriptedReranker([0.9, 0.1])
    rel = await relevance_with(skipped, [0.95, 0.3])
    assert skipped.calls == 0 and rel.reranked is False
    # Close candidates: its probabilities are both the relevance and what the floor reads.
    asked = ScriptedReranker([0.2, 0.8])
    rel = await relevance_with(asked, [0.6, 0.58])
    assert asked.calls == 1 and rel.reranked is True
    assert rel.scores == rel.floors == [0.2, 0.8]
    # A failing reranker leaves the fused scale: the recall still answers.
    failing = ScriptedReranker(error=TimeoutError("reranker down"))
    rel = await relevance_with(failing, [0.6, 0.58])
    assert failing.calls == 1 and rel.reranked is False and rel.floors == [0.6, 0.58]
