"""A memory's strength before its last reinforcement, replayed from its recorded events.

A record keeps its strength only as the state since the last reinforcement (`s_ref` at
`t_ref`, `n` spaced reinforcements, the spacing window) and the times of some events:
every repeat, and the last recall. Replaying those events from the initial strength with
the laws of `domain.strength` (`reinforce`, `decayed`) gives the path the recorded events
alone explain: one stretch of decay from the creation to the first event, one between
each two events, and one from the last event to `t_ref`, where the stored state takes
over.

What the record does not keep cannot be replayed: recalls before the last one, activation
spread from other memories' recalls, and an unpin's restart. `unrecorded` counts the spaced
reinforcements the stored `n` has beyond the replay's (earlier recalls, at unknown times),
and `jump` is how far the stored `s_ref` stands above (or below) the replay's value at
`t_ref`: both 0 when the recorded events explain the whole path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from pcm_common.domain.strength import ETA, decayed, reinforce


@dataclass(frozen=True)
class Stretch:
    """Decay from `s_start` at `start` (just after a reinforcement, or the creation) until
    `end`, with the time constant of `n` spaced reinforcements."""

    start: datetime
    end: datetime
    s_start: float
    n: int

    def at(self, when: datetime) -> float:
        return decayed(self.s_start, self.start, self.n, when)

    @property
    def s_end(self) -> float:
        return self.at(self.end)


@dataclass(frozen=True)
class Past:
    stretches: list[Stretch]
    replayed_n: int  # spaced reinforcements the recorded events make
    unrecorded: int  # the stored n beyond them: reinforcements whose times are not kept
    end_strength: float  # the replay's strength at t_ref, after any event at t_ref
    jump: float  # stored s_ref minus end_strength

    def at(self, when: datetime) -> float | None:
        """The replayed strength at `when` (just after a reinforcement at `when`), or None
        outside the replayed span."""
        if not self.stretches or when < self.stretches[0].start:
            return None
        for s in reversed(self.stretches):
            if s.start <= when <= s.end:
                return s.at(when)
        return None


def replay(
    initial: float,
    created_at: datetime,
    events: Iterable[datetime],
    *,
    s_ref: float,
    t_ref: datetime,
    n: int,
    eta: float = ETA,
) -> Past:
    """The strength from `created_at` (at `initial`) to `t_ref` through the reinforcements
    at `events` (repeats and recalls alike: both reinforce by `reinforce`), against the
    stored state (`s_ref`, `t_ref`, `n`). Events after `t_ref` cannot have happened before
    the stored state was written and are ignored; one before the creation counts at it,
    and time never runs backwards for the replay, as for `Strength.reinforced`."""
    s, t, k, r = initial, created_at, 0, 0
    window: datetime | None = None
    stretches: list[Stretch] = []
    for at in sorted(e for e in events if e <= t_ref):
        at = max(at, t)
        if at > t:
            stretches.append(Stretch(t, at, s, k))
        step = reinforce(s, t, k, r, window, at, eta)
        s, t, k, r, window = (
            step.s_ref,
            step.t_ref,
            step.n,
            step.recalls_in_window,
            step.window_start,
        )
    if t_ref > t:
        stretches.append(Stretch(t, t_ref, s, k))
    end = decayed(s, t, k, t_ref) if t_ref > t else s
    return Past(
        stretches=stretches,
        replayed_n=k,
        unrecorded=max(0, n - k),
        end_strength=end,
        jump=s_ref - end,
    )
