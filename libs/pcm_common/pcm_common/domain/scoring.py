"""Recall scoring (DESIGN §3): cue-dependent reactivation, score, relevance floor, sizes."""

from __future__ import annotations

from dataclasses import dataclass

# DESIGN §3's floor, for a relevance that is a probability: the reranker's default floor.
# Without a reranker the floor applies to the cosine and is the recall setting's.
RELEVANCE_FLOOR = 0.35
LINK_WEIGHT = 0.15
# Where a cue starts restoring strength, and how much more relevance restores it fully:
# DESIGN §3's values, for a relevance that is a probability or a cosine. Like the floor they
# are calibrated to the relevance in use (the recall service passes its own for the fused
# rank score).
CUE_START = 0.5
CUE_SPAN = 0.3


def reactivated(
    strength: float, rel: float, start: float = CUE_START, span: float = CUE_SPAN
) -> float:
    """A strong cue restores strength: S* = S + (1-S)·clip((rel-start)/span, 0, 1)."""
    boost = min(max((rel - start) / span, 0.0), 1.0)
    return strength + (1.0 - strength) * boost


@dataclass(frozen=True)
class ScoreParts:
    """The terms of a score, for a recall that explains its ranking: the strength the cue
    reactivated (S*), the relevance term rel·(0.75 + 0.25·S*), the graph link ℓ and its
    weighted term, the scope bonus and the state match. `total` is the score."""

    reactivated: float
    relevance_term: float
    link: float
    link_term: float
    scope_bonus: float
    state_bonus: float

    @property
    def total(self) -> float:
        return self.relevance_term + self.link_term + self.scope_bonus + self.state_bonus


def parts(
    rel: float,
    strength: float,
    link: float = 0.0,
    scope_bonus: float = 0.0,
    *,
    cue_start: float = CUE_START,
    cue_span: float = CUE_SPAN,
    link_weight: float = LINK_WEIGHT,
    state_bonus: float = 0.0,
) -> ScoreParts:
    """The terms of `score`, each on its own."""
    s_star = reactivated(strength, rel, cue_start, cue_span)
    return ScoreParts(
        reactivated=s_star,
        relevance_term=rel * (0.75 + 0.25 * s_star),
        link=link,
        link_term=link_weight * link,
        scope_bonus=scope_bonus,
        state_bonus=state_bonus,
    )


def score(
    rel: float,
    strength: float,
    link: float = 0.0,
    scope_bonus: float = 0.0,
    *,
    cue_start: float = CUE_START,
    cue_span: float = CUE_SPAN,
    link_weight: float = LINK_WEIGHT,
    state_bonus: float = 0.0,
) -> float:
    """rel·(0.75 + 0.25·S*) + 0.15·ℓ + scope bonus (0.15: the design's start value), plus
    the state match of a charged query (`affect.bonus`; 0 for a neutral one)."""
    return parts(
        rel,
        strength,
        link,
        scope_bonus,
        cue_start=cue_start,
        cue_span=cue_span,
        link_weight=link_weight,
        state_bonus=state_bonus,
    ).total


def passes_floor(rel: float, floor: float) -> bool:
    return rel >= floor


def pool_size(k: int) -> int:
    return max(50, 2 * k)


def prompt_budget_chars(k: int) -> int:
    return max(14_000, 900 * k)


def episode_seeds(k: int) -> int:
    return max(3, k // 10)
