"""Spreading activation (DESIGN §3, whitepaper §2.3 / §3.3): pure functions, no I/O.

When memory i is recalled and reinforced by ΔS_i, each associate j receives
ΔS_j = β·w_ij·ΔS_i. Associates of the top recalled memories are found when the recall
event is processed (no edge table): up to four similarity neighbours with cos ≥ 0.65
(w = cos) plus the memories saved in the same episode within 60 minutes (w = 0.7).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from pcm_common.domain.strength import PINNED_STRENGTH, decayed

BETA = 0.5  # *start*
SPREAD_TOP = 5  # only the best recalled memories spread activation
MAX_SIMILAR = 4
MIN_COS = 0.65
EPISODE_WEIGHT = 0.7
EPISODE_WINDOW = timedelta(minutes=60)


def similar_neighbours(
    source_id: str,
    hits: Iterable[tuple[str, float]],
    exclude: Iterable[str] = (),
    *,
    limit: int = MAX_SIMILAR,
    min_cos: float = MIN_COS,
) -> dict[str, float]:
    """The `limit` most similar memories with cos ≥ `min_cos`, weighted by their cosine.

    `hits` are (id, cosine) pairs from a vector search with the source's own vector, in
    any order; the source itself and `exclude` (memories reinforced directly) are skipped.
    """
    skip = {source_id, *exclude}
    ranked = sorted(((i, c) for i, c in hits if i not in skip and c >= min_cos), key=_by_cos)
    out: dict[str, float] = {}
    for mid, cos in ranked:
        if mid not in out:
            out[mid] = min(cos, 1.0)
        if len(out) >= limit:
            break
    return out


def _by_cos(hit: tuple[str, float]) -> tuple[float, str]:
    return (-hit[1], hit[0])  # best first; id breaks ties so the choice is deterministic


def episode_neighbours(
    source_id: str,
    source_created: datetime,
    mates: Iterable[tuple[str, datetime]],
    exclude: Iterable[str] = (),
    *,
    window: timedelta = EPISODE_WINDOW,
    weight: float = EPISODE_WEIGHT,
) -> dict[str, float]:
    """Same-episode memories saved within `window` of the source, each with `weight`.

    `mates` are (id, created_at) of memories already known to share the source's episode.
    """
    skip = {source_id, *exclude}
    return {
        mid: weight
        for mid, created in mates
        if mid not in skip and abs(created - source_created) <= window
    }


def merge_weights(*groups: Mapping[str, float]) -> dict[str, float]:
    """One association per neighbour: found both ways, the stronger weight counts."""
    out: dict[str, float] = {}
    for group in groups:
        for mid, w in group.items():
            out[mid] = max(w, out.get(mid, 0.0))
    return out


def spread(
    deltas: Mapping[str, float],
    weights: Mapping[str, Mapping[str, float]],
    *,
    beta: float = BETA,
) -> dict[str, float]:
    """Total ΔS_j = Σ_i β·w_ij·ΔS_i over the recalled memories i that j is associated with.

    `deltas`: recalled id -> its reinforcement ΔS_i; `weights`: recalled id -> {j: w_ij}.
    Recalled memories never receive activation (they were reinforced directly).
    """
    out: dict[str, float] = {}
    for src, delta in deltas.items():
        if delta <= 0.0:
            continue
        for mid, w in weights.get(src, {}).items():
            if mid in deltas:
                continue
            out[mid] = out.get(mid, 0.0) + beta * w * delta
    return {mid: d for mid, d in out.items() if d > 0.0}


def activate(
    s_ref: float,
    t_ref: datetime,
    n: int,
    now: datetime,
    delta: float,
    pinned: bool = False,
) -> tuple[float, datetime]:
    """New (s_ref, t_ref) of an associate after ΔS: S(now) + ΔS, capped at 1.

    Unlike reinforcement it does not count as a retrieval (n and the spacing window stay),
    so an associate keeps its own half-life and only gets its strength topped up.
    """
    if pinned:
        return PINNED_STRENGTH, t_ref
    at = max(now, t_ref)  # an event older than the last update never moves time back
    s = decayed(s_ref, t_ref, n, at)
    return min(s + max(delta, 0.0), 1.0), at


def top_recalled(ranked_ids: Sequence[str], top: int = SPREAD_TOP) -> list[str]:
    """The recalled memories that spread activation: the first `top`, duplicates removed."""
    return list(dict.fromkeys(ranked_ids))[:top]
