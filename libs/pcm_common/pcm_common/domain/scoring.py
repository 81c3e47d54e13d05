"""Recall scoring (DESIGN §3): cue-dependent reactivation, score, relevance floor, sizes."""

from __future__ import annotations

RELEVANCE_FLOOR = 0.35
LINK_WEIGHT = 0.15


def reactivated(strength: float, rel: float) -> float:
    """A strong cue restores strength: S* = S + (1-S)·clip((rel-0.5)/0.3, 0, 1)."""
    boost = min(max((rel - 0.5) / 0.3, 0.0), 1.0)
    return strength + (1.0 - strength) * boost


def score(rel: float, strength: float, link: float = 0.0, scope_bonus: float = 0.0) -> float:
    return rel * (0.75 + 0.25 * reactivated(strength, rel)) + LINK_WEIGHT * link + scope_bonus


def passes_floor(rel: float, floor: float = RELEVANCE_FLOOR) -> bool:
    return rel >= floor


def pool_size(k: int) -> int:
    return max(50, 2 * k)


def prompt_budget_chars(k: int) -> int:
    return max(14_000, 900 * k)


def episode_seeds(k: int) -> int:
    return max(3, k // 10)
