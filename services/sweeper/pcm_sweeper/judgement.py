"""A memory about to be judged (`Judgement`) and the event arithmetic judging shares with
the routine index: a memory stands for its creation and each recorded repeat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from pcm_common.domain import routine_rules as rr
from pcm_common.domain import visibility
from pcm_common.domain.memory import MemoryRecord
from pcm_common.domain.quantities import parse_quantities
from pcm_common.judge import FamilyMember
from pcm_common.stores.vectors import ScoredPoint


def event_times(payload: dict[str, Any]) -> list[float]:
    """The memory's creation time and the time of each recorded repeat (epoch seconds)."""
    times = [float(payload.get("created_ts") or 0.0)]
    for r in payload.get("repeats") or []:
        try:
            times.append(datetime.fromisoformat(str(r)).timestamp())
        except ValueError:
            continue
    return times


def event_count(payload: dict[str, Any], before: datetime) -> int:
    """1 + the memory's recorded repeats dated before `before`."""
    return events_before(event_times(payload), before.timestamp())


def events_before(times: list[float], cut: float) -> int:
    """`event_count` from the memory's `event_times`."""
    return 1 + sum(1 for t in times[1:] if t < cut)


@dataclass(frozen=True)
class Judgement:
    """One memory about to be judged: its family, and the records the judge compares
    (None when the family holds fewer than `family_min` events: nothing to judge)."""

    point: ScoredPoint
    memory: MemoryRecord
    family: list[ScoredPoint]
    records: list[FamilyMember] | None
    # `event_times` of each family member, read once for counting and the routine index.
    family_times: list[list[float]] | None = None
    # Entries of the family's routine in other wordings (`kin`), judged with the family.
    kin: list[ScoredPoint] = field(default_factory=list)


def events(members: Sequence[ScoredPoint], cut: float) -> int:
    return sum(events_before(event_times(f.payload), cut) for f in members)


def created_ts(point: ScoredPoint) -> float:
    ts = point.payload.get("created_ts")
    return float(ts) if isinstance(ts, int | float) else 0.0


def routine_item(
    point: ScoredPoint, family: list[ScoredPoint], times: list[list[float]] | None = None
) -> tuple[str, list[float], dict[str, list[float]]]:
    """A judged memory as the routine index takes it: its id, its event times and its
    family's (`times`: those of each member, when read already), the members that decide
    its routine only (`rr.routine_voters`). A routine is one group's
    (`visibility.peers`): a member of another group, from a family judged before families
    kept to the group, does not join it."""
    if times is None:
        times = [event_times(f.payload) for f in family]
    text = str(point.payload.get("text") or "")
    kinds = _kinds(text)
    own = {
        f.id: (f.score, t)
        for f, t in zip(family, times, strict=True)
        if visibility.same_group(f.payload, point.payload)
        and rr.same_series(text, str(f.payload.get("text") or ""), kinds, _kinds(f.payload))
    }
    voters = rr.routine_voters([(m, c) for m, (c, _) in own.items()])
    return point.id, event_times(point.payload), {m: own[m][1] for m in voters}


def _kinds(source: str | Mapping[str, Any]) -> frozenset[str]:
    """The kinds of figure a text (or a payload's text) states."""
    return text_kinds(source if isinstance(source, str) else str(source.get("text") or ""))


# Every judged memory reads the kinds of each member of its family, and the same members
# come back in the families of the memories written after them: under a mixed load
# (`bench.load`) parsing them again was ~7% of the all-in-one server's interpreter-lock
# time. The parse is a pure function of the text, so a bounded memo returns the same sets.
@lru_cache(maxsize=8192)
def text_kinds(text: str) -> frozenset[str]:
    """The kinds of figure `text` states, besides plain numbers and counts."""
    return frozenset(q.kind for q in parse_quantities(text) if q.kind not in {"number", "count"})
