from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.memory import MemoryRecord, State, Strength, StrengthView
from pcm_common.domain.strength import (
    DEMOTE_BELOW,
    decayed,
    initial_strength,
    reactivates,
    reinforce,
    should_demote,
    tau_days,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
days = st.floats(min_value=0, max_value=3650, allow_nan=False)
strengths = st.floats(min_value=1e-6, max_value=1.0, allow_nan=False)
counts = st.integers(min_value=0, max_value=200)


def test_whitepaper_half_lives() -> None:
    assert math.isclose(decayed(1.0, T0, 0, T0 + timedelta(days=90)), 0.05, rel_tol=1e-9)
    assert math.isclose(decayed(1.0, T0, 20, T0 + timedelta(days=540)), 0.05, rel_tol=1e-9)


def test_tiers_and_pinned() -> None:
    assert initial_strength("high") == 0.9
    assert initial_strength("normal") == 0.6
    assert initial_strength("low") == 0.3
    assert initial_strength("low", pinned=True) == 1.0


@given(strengths, counts, days)
def test_strength_in_unit_interval(s: float, n: int, d: float) -> None:
    v = decayed(s, T0, n, T0 + timedelta(days=d))
    assert 0 < v <= 1


@given(strengths, counts, days, days)
def test_decay_monotone_in_time(s: float, n: int, d1: float, d2: float) -> None:
    a, b = sorted((d1, d2))
    assert decayed(s, T0, n, T0 + timedelta(days=b)) <= decayed(s, T0, n, T0 + timedelta(days=a))


@given(counts, counts)
def test_more_reinforcements_never_shorten_half_life(n1: int, n2: int) -> None:
    a, b = sorted((n1, n2))
    assert tau_days(b) >= tau_days(a)


@given(strengths, counts, st.integers(min_value=0, max_value=5), days, days, days)
def test_a_reinforcement_never_shortens_the_half_life(
    s: float, n: int, r: int, since_window: float, d: float, after: float
) -> None:
    """Whatever the spacing, `reinforce` never lowers n, so the time constant never
    shrinks, and the reinforced memory is at least as strong at every later time."""
    now = T0 + timedelta(days=d)
    window = now - timedelta(days=since_window)
    got = reinforce(s, T0, n, r, window, now)
    assert got.n >= n and tau_days(got.n) >= tau_days(n)
    later = now + timedelta(days=after)
    assert decayed(got.s_ref, got.t_ref, got.n, later) >= decayed(s, T0, n, later)


@given(strengths, days)
def test_pinned_is_always_one(s: float, d: float) -> None:
    assert decayed(s, T0, 0, T0 + timedelta(days=d), pinned=True) == 1.0


@given(strengths, counts, days)
def test_reinforcement_raises_but_stays_below_one(s: float, n: int, d: float) -> None:
    now = T0 + timedelta(days=d)
    r = reinforce(s, T0, n, 0, None, now)
    assert decayed(s, T0, n, now) <= r.s_ref <= 1.0
    assert r.n == n + 1 and r.recalls_in_window == 1


def test_spacing_window_counts_n_once_and_diminishes() -> None:
    first = reinforce(0.5, T0, 0, 0, None, T0)
    second = reinforce(
        first.s_ref,
        first.t_ref,
        first.n,
        first.recalls_in_window,
        first.window_start,
        T0 + timedelta(hours=2),
    )
    assert second.n == first.n == 1
    assert second.recalls_in_window == 2
    assert second.delta < first.delta
    later = reinforce(
        second.s_ref,
        second.t_ref,
        second.n,
        second.recalls_in_window,
        second.window_start,
        T0 + timedelta(days=2),
    )
    assert later.n == 2 and later.recalls_in_window == 1


def test_demotion_rule() -> None:
    now = T0 + timedelta(days=200)
    assert should_demote(0.01, None, T0, now)
    assert not should_demote(0.01, now - timedelta(days=10), T0, now)
    assert not should_demote(0.2, None, T0, now)
    assert not should_demote(0.01, None, T0, now, pinned=True)
    # Imported yesterday with an old date: kept until it has been in the store 90 days.
    assert not should_demote(0.01, None, T0, now, ingested_at=now - timedelta(days=1))
    assert should_demote(0.01, None, T0, now, ingested_at=now - timedelta(days=91))
    # A simulated clock before ingestion (a replay) judges by event time alone.
    assert should_demote(0.01, None, T0, now, ingested_at=now + timedelta(days=365))


def _record(strength: Strength, state: State, *, pinned: bool = False) -> MemoryRecord:
    return MemoryRecord(
        id="m",
        tenant="t",
        text="x",
        text_hash="h",
        created_at=T0,
        ingested_at=T0,
        state=state,
        pinned=pinned,
        strength=strength,
    )


def test_reactivation_reverses_demotion() -> None:
    assert reactivates(DEMOTE_BELOW) and not reactivates(DEMOTE_BELOW - 1e-9)
    now = T0 + timedelta(days=200)
    weak = Strength(s_ref=0.01, t_ref=T0)
    rec = _record(weak, State.ARCHIVED)
    # Recalled again: reinforced far above the threshold, so active in the same write.
    recalled = weak.reinforced(now, recalled=True)
    assert rec.strength_patch(recalled, now) == {
        "strength": recalled.model_dump(mode="json"),
        "state": "active",
    }
    # A gain that leaves it under the threshold (a faint spread) leaves it archived.
    faint = weak.model_copy(update={"s_ref": 0.02, "t_ref": now})
    assert "state" not in rec.strength_patch(faint, now)
    # Only archived memories change state: superseded ones stay superseded.
    old = rec.model_copy(update={"state": State.SUPERSEDED})
    assert "state" not in old.strength_patch(recalled, now)


def test_strength_view_reads_and_patches_as_the_record_does() -> None:
    """The sweeper reads only `StrengthView.FIELDS` of a payload: it must see the same
    strength, pin and state as the whole record and give the same patches."""
    now = T0 + timedelta(days=200)
    for state in State:
        for pinned in (False, True):
            rec = _record(Strength(s_ref=0.01, t_ref=T0, n=3), state, pinned=pinned)
            payload = rec.to_payload()
            view = StrengthView.model_validate({k: payload[k] for k in StrengthView.FIELDS})
            assert (view.strength, view.pinned, view.state) == (rec.strength, pinned, state)
            for new in (
                rec.strength.reinforced(now, recalled=True),
                rec.strength.model_copy(update={"s_ref": 0.02, "t_ref": now}),
            ):
                assert view.strength_patch(new, now) == rec.strength_patch(new, now)
    # Fields a payload may lack take the record's defaults.
    bare = StrengthView.model_validate({"strength": {"t_ref": T0.isoformat()}})
    assert (bare.pinned, bare.state) == (False, State.ACTIVE)
