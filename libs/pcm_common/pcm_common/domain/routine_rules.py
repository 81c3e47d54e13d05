"""Routines and their absence (whitepaper §3.8, DESIGN §3): which routine a judged memory
joins, and whether a routine is regular and has stopped. Pure functions of family ids and
event times; the routine index (`stores/redis/routines`) applies them."""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ROUTINE_MIN_N = 5
ROUTINE_MAX_CV = 1.0
# Quiet for more than ROUTINE_GAP_FACTOR median intervals (two entries missed and the third
# half an interval overdue), and longer than any break the current run already had plus one
# interval. Why 2.5, not DESIGN §3's 3: docs/decisions/0027-stopped-routine-gap.md.
ROUTINE_GAP_FACTOR = 2.5
# Entries whose median interval is shorter than this are a burst (notes of one sitting),
# not a routine: six notes a few seconds apart were flagged "stopped" ten seconds later.
ROUTINE_MIN_GAP_S = 3600.0
ROUTINE_SHARED = 2  # family members a memory must share with a routine to join it
# The family members that decide a memory's routine: those nearly as close as its nearest
# one. A fringe of loosely similar entries of a neighbouring routine (weigh-ins in "kg" next
# to a gym log in "kg") must not outvote the memory's own series.
ROUTINE_NEAR_MARGIN = 0.2
RUN_BREAK = 10.0  # a gap this many median gaps long ends a run of entries


@dataclass(frozen=True)
class RoutineJoin:
    """Where a newly judged memory goes in the routine index.

    `target`: the routine it joins (None: it joins none). `merge`: other routines that it
    shows to be the same routine, to be folded into `target`. `adopt`: its family members
    that belong to no routine yet; they join with it."""

    target: str | None
    merge: tuple[str, ...] = ()
    adopt: tuple[str, ...] = ()


def routine_join(
    memory_id: str,
    family: Sequence[str],
    routine_of: Mapping[str, str],
    sizes: Mapping[str, int],
) -> RoutineJoin:
    """The routine rule of §3.8, applied once per memory when it is judged.

    A memory belongs to a routine when at least ROUTINE_SHARED of its family members do and
    they are at least half of its family: a coffee entry whose family caught two phone
    calls of similar shape stays with the coffee routine. When its family spans two
    routines that both pass, they were one routine seen from two ends and are merged (into
    the larger, so little has to move). A memory that joins no routine starts one with the
    members of its family that have none, if any: the first entries of a series.

    `routine_of`: family member -> its routine; `sizes`: routine -> entries in it.
    Judging memories in time order and applying each result builds the same partition as
    taking every memory's family as an edge of that rule, without reading any family again
    at recall time."""
    members = _members(memory_id, family)
    passing = _passing(members, routine_of)
    adopt = tuple(f for f in members if f not in routine_of)
    if not passing:
        if not adopt:
            return RoutineJoin(target=routine_of.get(memory_id))
        return RoutineJoin(target=routine_of.get(memory_id, memory_id), adopt=adopt)
    passing.sort(key=lambda r: (-sizes.get(r, 0), r))
    own = routine_of.get(memory_id)
    if own is not None and own not in passing:
        passing.append(own)  # judged again after joining elsewhere: keep its entries together
    return RoutineJoin(target=passing[0], merge=tuple(passing[1:]), adopt=adopt)


def routine_voters(family: Sequence[tuple[str, float]]) -> list[str]:
    """The family members (id, cosine) whose routines decide the memory's (`routine_join`):
    those within ROUTINE_NEAR_MARGIN of the nearest, when there are at least
    ROUTINE_SHARED of them; else the whole family (a series' first entries in a new
    phrasing have only loose neighbours, and those are its routine). Order is kept."""
    if not family:
        return []
    best = max(c for _, c in family)
    near = [m for m, c in family if c >= best - ROUTINE_NEAR_MARGIN]
    return near if len(near) >= ROUTINE_SHARED else [m for m, _ in family]


def _members(memory_id: str, family: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(f for f in family if f != memory_id))


def _passing(members: Sequence[str], routine_of: Mapping[str, str]) -> list[str]:
    """The routines that enough of the family members belong to (see `routine_join`)."""
    # A plain dict: a Counter per call cost more than the counting (twice per judgement).
    shared: dict[str, int] = {}
    for f in members:
        if f in routine_of:
            r = routine_of[f]
            shared[r] = shared.get(r, 0) + 1
    return [r for r, n in shared.items() if n >= ROUTINE_SHARED and n * 2 >= len(members)]


def routines_to_rank(
    memory_id: str, family: Sequence[str], routine_of: Mapping[str, str]
) -> list[str]:
    """The routines whose sizes `routine_join` reads for these arguments: the passing
    ones, when there are two or more to choose the target from (none otherwise), so a
    caller need not look up the size of every routine the family touches."""
    passing = _passing(_members(memory_id, family), routine_of)
    return passing if len(passing) > 1 else []


@dataclass(frozen=True)
class RoutineState:
    n: int
    last_ts: float
    median_gap_s: float
    cv: float
    regular: bool
    stopped: bool


def routine_state(
    times: Iterable[float],
    now: float,
    *,
    min_n: int = ROUTINE_MIN_N,
    max_cv: float = ROUTINE_MAX_CV,
    factor: float = ROUTINE_GAP_FACTOR,
    min_gap_s: float = ROUTINE_MIN_GAP_S,
) -> RoutineState | None:
    """Regularity of a routine's entry times and whether it has gone quiet at `now`: quiet
    for more than `factor` median intervals and for longer than its longest earlier break
    plus one median interval. Regular also needs a median interval of at least
    `min_gap_s`: entries minutes apart are one sitting, and never "stopped".

    Entries after `now` mean the routine went on, so it has not stopped. None when there
    are fewer than `min_n` entries up to now.
    """
    all_t = sorted(times)
    past = [t for t in all_t if t <= now]
    if len(past) >= 2:
        # The current run only: an isolated much older entry (a similar memory from long
        # ago, or the routine before a long break) would otherwise dominate cv.
        med0 = statistics.median(b - a for a, b in itertools.pairwise(past))
        for i in range(len(past) - 1, 0, -1):
            if med0 > 0 and past[i] - past[i - 1] > RUN_BREAK * med0:
                all_t = [t for t in all_t if t >= past[i]]
                past = past[i:]
                break
    if len(past) < min_n:
        return None
    gaps = [b - a for a, b in itertools.pairwise(past)]
    mean = statistics.fmean(gaps)
    cv = statistics.pstdev(gaps) / mean if mean > 0 else math.inf
    med = statistics.median(gaps)
    regular = cv < max_cv and med >= min_gap_s and med > 0
    quiet = now - past[-1]
    stopped = (
        regular and len(past) == len(all_t) and quiet > factor * med and quiet > max(gaps) + med
    )
    return RoutineState(
        n=len(past), last_ts=past[-1], median_gap_s=med, cv=cv, regular=regular, stopped=stopped
    )


def describe_interval(seconds: float) -> str:
    days = seconds / 86400
    if days >= 1.5:
        return f"every {days:.0f} days" if round(days) != 7 else "weekly"
    if days >= 0.75:
        return "daily"
    return f"every {seconds / 3600:.0f} h"


# A name: a capitalised word that does not open the text or a sentence ("IronWorks",
# "Skyline"); currency codes and units (no lower-case letter) are not names.
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z'&]*[a-z][A-Za-z'&]*\b")


def names_in(text: str) -> frozenset[str]:
    """The names a text mentions, lower-cased (a cheap reading: no parser at this step)."""
    return frozenset(m.group(0).lower() for m in _NAME.finditer(text.strip()))


def same_series(a: str, b: str, kinds_a: frozenset[str], kinds_b: frozenset[str]) -> bool:
    """Whether two entries may belong to one routine: when both name something, they share
    a name; else the kinds of figure one states are among the other's ("Weekly weight:
    68.5 kg" beside "68.2kg on the bathroom scale, body fat 24%"). A phone bill and a
    streaming subscription share a currency, not a provider."""
    na, nb = names_in(a), names_in(b)
    if na and nb:
        return bool(na & nb)
    return kinds_a <= kinds_b or kinds_b <= kinds_a
