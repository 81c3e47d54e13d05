"""A memory's strength over time, for the inspector's plot: the events known from its
record, the decay curve from its last reinforcement, and when it falls below the demotion
threshold. Pure functions over `pcm_common.domain.strength` (no formula of its own)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain.memory import MemoryRecord
from pcm_common.domain.strength import DEMOTE_AFTER, DEMOTE_BELOW, decayed, tau_days

# Points of the drawn curve; enough for a smooth exponential at any width.
CURVE_POINTS = 60
# How far the curve runs past `now` when the threshold is never crossed (a pinned memory).
HORIZON = timedelta(days=180)


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


def _events(rec: MemoryRecord) -> list[dict[str, Any]]:
    s = rec.strength
    marks = [{"at": rec.created_at, "kind": "created"}]
    marks += [{"at": at, "kind": "repeat"} for at in rec.repeats]
    if s.last_recalled_at is not None:
        marks.append({"at": s.last_recalled_at, "kind": "recall"})
    if s.n > 0 and s.t_ref not in {m["at"] for m in marks}:
        marks.append({"at": s.t_ref, "kind": "reinforcement"})
    return sorted(marks, key=lambda m: m["at"])


def strength_view(rec: MemoryRecord, now: datetime) -> dict[str, Any]:
    s = rec.strength
    crosses = None if rec.pinned else crossing(s.s_ref, s.t_ref, s.n)
    # Only the path since the last reinforcement is known (earlier ones are not kept).
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
        "events": _events(rec),
        "curve": curve,
        "crosses_threshold_at": crosses,
        "demotable_at": demotable_at(rec, crosses),
    }
