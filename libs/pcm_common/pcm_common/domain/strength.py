"""Memory strength: initial value, lazy decay with the savings effect, reinforcement.

Pure functions of DESIGN §3. Times are datetimes; durations in days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

TIER_STRENGTH = {"high": 0.9, "normal": 0.6, "low": 0.3}
PINNED_STRENGTH = 1.0
TAU0_DAYS = 90.0 / math.log(20.0)  # n=0 decays to 5% in 90 days
ETA = 0.5  # reinforcement rate
WINDOW = timedelta(hours=24)  # spacing window for reinforcement
DEMOTE_BELOW = 0.05
DEMOTE_AFTER = timedelta(days=90)


def initial_strength(importance: str, pinned: bool = False) -> float:
    return PINNED_STRENGTH if pinned else TIER_STRENGTH.get(importance, TIER_STRENGTH["normal"])


def tau_days(n: int) -> float:
    """Time constant grows with spaced reinforcements (the savings effect)."""
    return TAU0_DAYS * (1.0 + max(n, 0) / 4.0)


def decayed(s_ref: float, t_ref: datetime, n: int, now: datetime, pinned: bool = False) -> float:
    if pinned:
        return PINNED_STRENGTH
    days = max((now - t_ref).total_seconds() / 86400.0, 0.0)
    return s_ref * math.exp(-days / tau_days(n))


@dataclass(frozen=True)
class Reinforced:
    s_ref: float
    t_ref: datetime
    n: int
    recalls_in_window: int
    window_start: datetime
    delta: float


def reinforce(
    s_ref: float,
    t_ref: datetime,
    n: int,
    recalls_in_window: int,
    window_start: datetime | None,
    now: datetime,
    eta: float = ETA,
) -> Reinforced:
    """ΔS = η(1-S)/(1+r); n grows at most once per 24 h window (spacing)."""
    s = decayed(s_ref, t_ref, n, now)
    in_window = window_start is not None and timedelta(0) <= now - window_start < WINDOW
    r = recalls_in_window if in_window else 0
    delta = eta * (1.0 - s) / (1.0 + r)
    new_n = n if in_window else n + 1
    return Reinforced(
        s_ref=min(s + delta, 1.0),
        t_ref=now,
        n=new_n,
        recalls_in_window=r + 1,
        window_start=window_start if in_window and window_start else now,
        delta=delta,
    )


def should_demote(
    strength: float,
    last_recalled_at: datetime | None,
    t_ref: datetime,
    now: datetime,
    pinned: bool = False,
    ingested_at: datetime | None = None,
) -> bool:
    """S < 0.05 and not recalled for 90 days. A memory that has been in the store for less
    than those 90 days is kept whatever its stated date: an imported history must get its
    chance to be recalled first. A clock before ingestion is a simulated replay, where only
    event time counts."""
    if pinned or strength >= DEMOTE_BELOW:
        return False
    if ingested_at is not None and timedelta(0) <= now - ingested_at < DEMOTE_AFTER:
        return False
    last = last_recalled_at or t_ref
    return now - last >= DEMOTE_AFTER


def reactivates(strength: float) -> bool:
    """Demotion reversed: an archived memory that a recall, a repeat or spreading activation
    lifts back to the demotion threshold is active again. Archived means weak and unused;
    once used it is neither, and a cue that reached it once should not have to be strong
    enough to reach it again every time."""
    return strength >= DEMOTE_BELOW
