"""Near-duplicates inside one write request (DESIGN §3's merge rule applied among the
request's own new items): a batch then stores what the same items written one at a time
would, where before only exact copies in a batch were merged."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

import numpy as np

from pcm_common.domain.surprisal import distinct_events


def earlier_twins(
    keys: Sequence[Hashable],
    vectors: Sequence[Sequence[float]],
    texts: Sequence[str],
    min_cos: float,
) -> dict[int, int]:
    """Position -> the position of the earlier item it repeats, for items in request order.

    An item repeats an earlier kept one (itself no repeat) with the same `keys` entry (the
    caller's scope and stated figures), a cosine of at least `min_cos`, and no other name or
    added clause (`distinct_events`); the earliest such one wins, as it would have been
    stored first. Only items with the same key are compared (one matrix product each)."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for pos, key in enumerate(keys):
        groups[key].append(pos)
    out: dict[int, int] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        m = np.asarray([vectors[p] for p in members], dtype=np.float32)
        m /= np.clip(np.linalg.norm(m, axis=1, keepdims=True), 1e-12, None)
        sims = m @ m.T
        kept: list[int] = []  # rows of `members` stored as new
        for a, pos in enumerate(members):
            first = next(
                (
                    b
                    for b in kept
                    if sims[a, b] >= min_cos and not distinct_events(texts[members[b]], texts[pos])
                ),
                None,
            )
            if first is None:
                kept.append(a)
            else:
                out[pos] = members[first]
    return out
