"""A memory's strength over time, for the inspector's plot: the events known from its
record, the path before the last reinforcement replayed from them
(`pcm_common.domain.strength_past`), the decay curve from the last reinforcement, and when
it falls below the demotion threshold. Pure functions over `pcm_common.domain.strength`
(no formula of its own)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain.memory import MemoryRecord
from pcm_common.domain.salience import strength_with
from pcm_common.domain.strength import (
    DEMOTE_AFTER,
    DEMOTE_BELOW,
    decayed,
    initial_strength,
    tau_days,
)
from pcm_common.domain.strength_past import Past, replay

# Points of the drawn curve; enough for a smooth exponential at any width.
CURVE_POINTS = 60
# How far the curve runs past `now` when the threshold is never crossed (a pinned memory).
HORIZON = timedelta(days=180)
# Points of the replayed past, spread over its stretches by their length (at least two
# each: its start just after a reinforcement and its end just before the next).
PAST_POINTS = 60


def crossing(s_ref: float, t_ref: datetime, n: int) -> datetime | None:
    """When `decayed` reaches the demotion threshold, or None if it starts below it."""
    if s_ref < DEMOTE_BELOW:
        return None
    return t_ref + timedelta(days=tau_days(n) * math.log(s_ref / DEMOTE_BELOW))


def demotable_at(rec: MemoryRecord, crosses: datetime | None) -> datetime | None:
    """The earliest time the demotion job would archive it (`should_demote`): below the
    threshold, unrecalled for 90 days, and in the store for 90 days. None: pinned."""
    if rec.pinned:
        return None
    s = rec.strength
    weak = crosses or s.t_ref
    return max(weak, (s.last_recalled_at or s.t_ref) + DEMOTE_AFTER, rec.ingested_at + DEMOTE_AFTER)


def initial_of(rec: MemoryRecord) -> float:
    """The strength it was stored with: its importance tier's, lifted by its salience when
    it was a kept capture (at the default capture threshold: the setting is ingest's)."""
    base = initial_strength(rec.importance.value)
    return strength_with(base, rec.salience) if rec.salience is not None else base


def past_of(rec: MemoryRecord) -> Past:
    """The path from its creation to its last reinforcement, replayed from the recorded
    repeats and last recall (`strength_past.replay`)."""
    s = rec.strength
    events = [*rec.repeats, *([s.last_recalled_at] if s.last_recalled_at else [])]
    return replay(initial_of(rec), rec.created_at, events, s_ref=s.s_ref, t_ref=s.t_ref, n=s.n)


def _past_curve(past: Past) -> list[dict[str, Any]]:
    """Points of each stretch: its start (just after a reinforcement) to its end (just
    before the next), so a reinforcement shows as a step up at one instant."""
    if not past.stretches:
        return []
    span = (past.stretches[-1].end - past.stretches[0].start).total_seconds() or 1.0
    out: list[dict[str, Any]] = []
    for st in past.stretches:
        share = (st.end - st.start).total_seconds() / span
        k = max(2, round(PAST_POINTS * share))
        step = (st.end - st.start) / (k - 1)
        for i in range(k):
            at = st.end if i == k - 1 else st.start + step * i
            out.append({"at": at, "strength": round(st.at(at), 6)})
    return out


def _events(rec: MemoryRecord, past: Past | None) -> list[dict[str, Any]]:
    """The recorded events, each with the strength just after it: on the replayed path
    before the last reinforcement, the stored one from it on."""
    s = rec.strength
    marks: list[tuple[datetime, str]] = [(rec.created_at, "created")]
    marks += [(at, "repeat") for at in rec.repeats]
    if s.last_recalled_at is not None:
        marks.append((s.last_recalled_at, "recall"))
    if s.n > 0 and s.t_ref not in {at for at, _ in marks}:
        marks.append((s.t_ref, "reinforcement"))
    out = []
    for at, kind in sorted(marks, key=lambda m: m[0]):
        replayed = past.at(at) if past is not None and at < s.t_ref else None
        if replayed is None:
            replayed = decayed(s.s_ref, s.t_ref, s.n, max(at, s.t_ref), rec.pinned)
        out.append({"at": at, "kind": kind, "strength": round(replayed, 6)})
    return out


def _replay_summary(rec: MemoryRecord, past: Past | None) -> dict[str, Any] | None:
    if past is None:
        return None
    return {
        "initial": round(initial_of(rec), 6),
        "reinforcements": past.replayed_n,
        "unrecorded": past.unrecorded,
        "end_strength": round(past.end_strength, 6),
        "jump": round(past.jump, 6),
    }


def strength_view(rec: MemoryRecord, now: datetime) -> dict[str, Any]:
    s = rec.strength
    crosses = None if rec.pinned else crossing(s.s_ref, s.t_ref, s.n)
    # A pinned memory stays at 1, and when it was pinned is not recorded: no past drawn.
    past = None if rec.pinned else past_of(rec)
    start = s.t_ref
    end = max(crosses, now) if crosses else now + HORIZON
    step = (end - start) / (CURVE_POINTS - 1)
    curve = []
    for i in range(CURVE_POINTS):
        at = end if i == CURVE_POINTS - 1 else start + step * i
        value = decayed(s.s_ref, s.t_ref, s.n, at, rec.pinned)
        curve.append({"at": at, "strength": round(value, 6), "projected": at > now})
    return {
        "id": rec.id,
        "now": now,
        "pinned": rec.pinned,
        "current": round(s.at(now, rec.pinned), 6),
        "threshold": DEMOTE_BELOW,
        "s_ref": s.s_ref,
        "t_ref": s.t_ref,
        "n": s.n,
        "tau_days": round(tau_days(s.n), 3),
        "last_recalled_at": s.last_recalled_at,
        "events": _events(rec, past),
        "past": _past_curve(past) if past else [],
        "replay": _replay_summary(rec, past),
        "curve": curve,
        "crosses_threshold_at": crosses,
        "demotable_at": demotable_at(rec, crosses),
    }
