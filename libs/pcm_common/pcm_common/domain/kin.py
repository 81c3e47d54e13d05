"""Routine kin: the earlier entries of a memory's routine that its family search missed.

A routine written in several phrasings is one routine in the routine index (its entries'
families overlap), but a new entry's nearest-neighbour family holds only the entries worded
like it: a terse "call w/ Dad 28m" has one sentence-shaped neighbour above the family
threshold. Judged against that alone it has too few events to be judged at all. Its kin are
the other entries of the routine its family members belong to: the same series in its
other wordings, which the judge compares by kind and unit, not by wording.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from pcm_common.domain.routine_rules import routine_state
from pcm_common.domain.surprisal import FAMILY_MIN_COS

# Kin farther than this from the memory are left out: an entry of the routine must still
# resemble it a little (a routine folded with a neighbour's through one shared member
# would otherwise lend every entry of the neighbour).
KIN_MIN_COS = 0.2
_EPS = 0.01  # a member at the threshold still counts a little

# A memory with no family at all (a routine's entry naming a new place, person or provider:
# "Cedar Court Lettings - monthly rent - $1,260.00" after "Rent paid: $1,260.00 to Mr
# Okafor", cosine 0.43-0.45) may still be the routine's next entry: its neighbours down to
# NEAR_MIN_COS that share a word with it point to the routine when at least NEAR_MIN_HITS
# of them belong to it, and the routine is regular and due: the memory comes when the next
# entry was expected, give or take SPREAD_FACTOR times the routine's own mean deviation
# from its median interval (at least MIN_SLACK_S, at most SCHEDULE_TOLERANCE intervals).
NEAR_MIN_COS = 0.35
NEAR_MIN_HITS = 2
SCHEDULE_TOLERANCE = 0.35
SPREAD_FACTOR = 3.0
MIN_SLACK_S = 86_400.0


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


def near_routine(
    near: Sequence[tuple[str, float]], routine_of: Mapping[str, str | None]
) -> str | None:
    """The routine that at least `NEAR_MIN_HITS` of a family-less memory's neighbours (id,
    cosine) belong to, holding most of those that belong to any (`kin_routine`)."""
    best = kin_routine(near, routine_of)
    if best is None or sum(routine_of.get(m) == best for m, _ in near) < NEAR_MIN_HITS:
        return None
    return best


def on_schedule(times: Sequence[float], at: float) -> bool:
    """Whether a routine with entries at `times` (all before `at`) is regular and expects
    its next entry about `at`."""
    state = routine_state(times, at)
    if state is None or not state.regular or state.stopped:
        return False
    med = state.median_gap_s
    past = sorted(t for t in times if t <= at)[-state.n :]
    spread = sum(abs(b - a - med) for a, b in itertools.pairwise(past)) / (state.n - 1)
    slack = min(SCHEDULE_TOLERANCE * med, max(SPREAD_FACTOR * spread, MIN_SLACK_S))
    return abs(at - (state.last_ts + med)) <= slack
