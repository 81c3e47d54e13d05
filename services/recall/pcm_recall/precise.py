"""Precise recall (`precision: "precise"`): what an agent pays for in its context window.

The standard recall fills its k slots with the best candidates and expands the best seeds
into their episodes, which suits a reader that wants everything possibly related (LoCoMo's
evidence recall). An agent's prompt wants less: the memories that clearly answer, and
nothing when nothing does. Precise mode takes the same ranked candidates and

- answers empty unless the best candidate's cosine reaches `min_top_cosine` (an absolute
  test: the fused rank score is ~1.0 for the best match of any query, related or not);
- keeps candidates while their score stays within `score_ratio` of the best one's, and
  stops at the first drop between neighbours in the ranking larger than `max_gap` of it
  (the knee where relevance falls off); of those, only the ones whose own cosine reaches
  `min_cosine` (in a small store the fused rank score of a memory that merely shares a
  word can stay near the best one's);
- expands only strong seeds (score within `seed_ratio` of the best) into their episodes;
- shows each text once.

The functions here are pure: the recall service applies them, and the benchmark
(`bench.precise`) replays the same cut on recorded rankings to tune and score it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, TypeVar

Precision = Literal["standard", "precise"]
T = TypeVar("T")


@dataclass(frozen=True)
class PreciseRule:
    """The precise cut's parameters (RecallSettings' `precise_*`)."""

    min_top_cosine: float
    min_cosine: float
    score_ratio: float
    max_gap: float
    seed_ratio: float


def kept(scores: Sequence[float], cosines: Sequence[float], rule: PreciseRule) -> list[int]:
    """Which of the best-first candidates (their `scores` and `cosines`) precise mode
    delivers, by position: none when the best cosine is under `min_top_cosine`; else those
    of the run of scores within `score_ratio` of the first that never drops by more than
    `max_gap` of it, whose own cosine reaches `min_cosine` (a lexical match alone does not
    make a memory relevant)."""
    if not scores or max(cosines, default=0.0) < rule.min_top_cosine or scores[0] <= 0:
        return []
    best = scores[0]
    run = 1
    for prev, cur in pairwise(scores):
        if cur < rule.score_ratio * best or prev - cur > rule.max_gap * best:
            break
        run += 1
    return [i for i in range(run) if cosines[i] >= rule.min_cosine]


def strong(scores: Sequence[float], rule: PreciseRule) -> int:
    """How many of the kept best-first `scores` are strong enough to bring their episode
    neighbours: those within `seed_ratio` of the best."""
    if not scores:
        return 0
    return sum(1 for s in scores if s >= rule.seed_ratio * scores[0])


def text_key(text: str) -> str:
    """Two memories whose texts differ only in spacing or case read the same to an agent."""
    return " ".join(text.split()).casefold()


def unique_texts(items: Sequence[T], text: Callable[[T], str], seen: set[str]) -> list[T]:
    """`items` without those whose text is already in `seen` (or earlier in `items`);
    `seen` grows by the texts kept."""
    out: list[T] = []
    for item in items:
        key = text_key(text(item))
        if key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out
