"""Recall scoring (DESIGN §3): cue-dependent reactivation, score, relevance floor, sizes."""

from __future__ import annotations

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
    s_star = reactivated(strength, rel, cue_start, cue_span)
    return rel * (0.75 + 0.25 * s_star) + link_weight * link + scope_bonus + state_bonus


def passes_floor(rel: float, floor: float) -> bool:
    return rel >= floor


def pool_size(k: int) -> int:
    return max(50, 2 * k)


def prompt_budget_chars(k: int) -> int:
    return max(14_000, 900 * k)


def episode_seeds(k: int) -> int:
    return max(3, k // 10)
