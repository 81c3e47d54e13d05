"""The strength before the last reinforcement, replayed from the recorded events, against a
record built by the domain's own reinforcement (`Strength.reinforced`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pcm_common.domain.activation import activate
from pcm_common.domain.memory import Strength
from pcm_common.domain.strength import decayed
from pcm_common.domain.strength_past import replay

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def lived(initial: float, times: list[tuple[datetime, bool]]) -> list[Strength]:
    """The stored strength after each reinforcement, as ingest (repeats) and the sweeper
    (recalls) write it."""
    out = [Strength(s_ref=initial, t_ref=T0)]
    for at, recalled in times:
        out.append(out[-1].reinforced(at, recalled=recalled))
    return out


def test_no_event_no_past() -> None:
    past = replay(0.6, T0, [], s_ref=0.6, t_ref=T0, n=0)
    assert past.stretches == [] and past.replayed_n == 0 and past.unrecorded == 0
    assert past.end_strength == 0.6 and past.jump == 0.0
    assert past.at(T0 + DAY) is None


def test_recorded_events_replay_the_stored_state_exactly() -> None:
    times = [(T0 + 3 * DAY, False), (T0 + 10 * DAY, False), (T0 + 30 * DAY, True)]
    states = lived(0.6, times)
    last = states[-1]
    past = replay(0.6, T0, [at for at, _ in times], s_ref=last.s_ref, t_ref=last.t_ref, n=last.n)
    assert past.replayed_n == last.n and past.unrecorded == 0
    assert past.jump == pytest.approx(0.0, abs=1e-12)
    # One stretch from the creation to each event; the last event is t_ref itself.
    assert [(st.start, st.end) for st in past.stretches] == [
        (T0, T0 + 3 * DAY),
        (T0 + 3 * DAY, T0 + 10 * DAY),
        (T0 + 10 * DAY, T0 + 30 * DAY),
    ]
    # Each stretch starts where the stored state after that event stood, and decays by
    # the law with that state's n.
    for st, state in zip(past.stretches, states, strict=False):
        assert st.s_start == pytest.approx(state.s_ref) and st.n == state.n
        mid = st.start + (st.end - st.start) / 2
        assert past.at(mid) == pytest.approx(decayed(state.s_ref, state.t_ref, state.n, mid))
    # A reinforcement is a step up: the value at an event is the one just after it.
    before = past.stretches[0].s_end
    assert past.at(T0 + 3 * DAY) == pytest.approx(states[1].s_ref) and states[1].s_ref > before


def test_an_earlier_recall_the_record_forgot_is_counted_not_drawn() -> None:
    # Two recalls; the record keeps only the last one's time (`last_recalled_at`).
    times = [(T0 + 5 * DAY, True), (T0 + 20 * DAY, True)]
    last = lived(0.6, times)[-1]
    past = replay(0.6, T0, [T0 + 20 * DAY], s_ref=last.s_ref, t_ref=last.t_ref, n=last.n)
    assert past.unrecorded == 1 and past.replayed_n == last.n - 1
    # Without the first recall the replay ends weaker than the stored state.
    assert past.jump > 0 and past.end_strength < last.s_ref


def test_events_in_one_window_count_once_for_spacing() -> None:
    times = [(T0 + 2 * DAY, False), (T0 + 2 * DAY + timedelta(hours=3), False)]
    last = lived(0.3, times)[-1]
    past = replay(0.3, T0, [at for at, _ in times], s_ref=last.s_ref, t_ref=last.t_ref, n=last.n)
    assert past.replayed_n == 1 == last.n
    assert past.jump == pytest.approx(0.0, abs=1e-12)


def test_activation_moves_t_ref_without_an_event() -> None:
    # A recall, then activation spread from another memory's recall ten days later: t_ref
    # moves, n does not, and no event records it.
    recall = T0 + 4 * DAY
    st = lived(0.6, [(recall, True)])[-1]
    s_ref, t_ref = activate(st.s_ref, st.t_ref, st.n, T0 + 14 * DAY, 0.2)
    past = replay(0.6, T0, [recall], s_ref=s_ref, t_ref=t_ref, n=st.n)
    assert past.unrecorded == 0
    assert past.stretches[-1].start == recall and past.stretches[-1].end == t_ref
    assert past.end_strength == pytest.approx(decayed(st.s_ref, recall, st.n, t_ref))
    assert past.jump == pytest.approx(s_ref - past.end_strength) and past.jump > 0


def test_events_outside_the_span_are_clamped_or_ignored() -> None:
    late = T0 + 40 * DAY
    past = replay(0.6, T0, [T0 - DAY, late], s_ref=0.8, t_ref=T0 + 10 * DAY, n=1)
    # The early one counts at the creation; the one after t_ref cannot have happened yet.
    assert past.replayed_n == 1
    assert past.stretches[0].start == T0 and past.stretches[-1].end == T0 + 10 * DAY
    assert all(st.end <= T0 + 10 * DAY for st in past.stretches)
