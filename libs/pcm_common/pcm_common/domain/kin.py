"""Routine kin: the earlier entries of a memory's routine that its family search missed.

A routine written in several phrasings is one routine in the routine index (its entries'
families overlap), but a new entry's nearest-neighbour family holds only the entries worded
like it: a terse "call w/ Dad 28m" has one sentence-shaped neighbour above the family
threshold. Judged against that alone it has too few events to be judged at all. Its kin are
the other entries of the routine its family members belong to: the same series in its
other wordings, which the judge compares by kind and unit, not by wording.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pcm_common.domain.surprisal import FAMILY_MIN_COS

# Kin farther than this from the memory are left out: an entry of the routine must still
# resemble it a little (a routine folded with a neighbour's through one shared member
# would otherwise lend every entry of the neighbour).
KIN_MIN_COS = 0.2
_EPS = 0.01  # a member at the threshold still counts a little


def kin_routine(
    family: Sequence[tuple[str, float]], routine_of: Mapping[str, str | None]
) -> str | None:
    """The routine whose entries the family members (id, cosine) mostly belong to, or None.

    A routine wins by the summed closeness of its members above the family threshold; it
    must hold more than half of that of all members that belong to any routine, so a family
    split between two routines lends neither. Closeness above the threshold, not the
    cosine itself: one near copy of the memory (its own series) outweighs a fringe of
    entries that only just reached the family (a deploy log's family catching invoices
    through the word "billing")."""
    weight: dict[str, float] = {}
    for mid, cos in family:
        r = routine_of.get(mid)
        if r is not None:
            weight[r] = weight.get(r, 0.0) + max(cos - FAMILY_MIN_COS, 0.0) + _EPS
    if not weight:
        return None
    best = max(weight, key=lambda r: (weight[r], r))
    return best if weight[best] * 2 > sum(weight.values()) else None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
