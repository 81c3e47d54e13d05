"""Spreading activation (DESIGN §3): neighbour selection and ΔS_j = β·w_ij·ΔS_i."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.activation import (
    activate,
    episode_neighbours,
    merge_weights,
    similar_neighbours,
    spread,
    top_recalled,
)
from pcm_common.domain.strength import decayed

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_similar_neighbours_top_four_above_threshold() -> None:
    hits = [
        ("self", 1.0),
        ("a", 0.91),
        ("b", 0.64),  # below 0.65
        ("c", 0.70),
        ("recalled", 0.95),  # reinforced directly, not an associate
        ("d", 0.80),
        ("e", 0.66),
        ("f", 0.65),
    ]
    got = similar_neighbours("self", hits, exclude={"recalled"})
    assert got == {"a": 0.91, "d": 0.80, "c": 0.70, "e": 0.66}


def test_episode_neighbours_within_sixty_minutes() -> None:
    mates = [
        ("self", T0),
        ("before", T0 - timedelta(minutes=60)),  # inclusive
        ("after", T0 + timedelta(minutes=59)),
        ("late", T0 + timedelta(minutes=61)),
        ("recalled", T0 + timedelta(minutes=5)),
    ]
    got = episode_neighbours("self", T0, mates, exclude={"recalled"})
    assert got == {"before": 0.7, "after": 0.7}


def test_merge_keeps_the_stronger_association() -> None:
    assert merge_weights({"a": 0.9, "b": 0.66}, {"b": 0.7, "c": 0.7}) == {
        "a": 0.9,
        "b": 0.7,
        "c": 0.7,
    }


def test_spread_formula_and_sum_over_sources() -> None:
    deltas = {"i1": 0.2, "i2": 0.1}
    weights = {"i1": {"j": 0.8, "i2": 0.9}, "i2": {"j": 0.7, "k": 0.7}}
    got = spread(deltas, weights, beta=0.5)
    assert got["j"] == pytest.approx(0.5 * 0.8 * 0.2 + 0.5 * 0.7 * 0.1)
    assert got["k"] == pytest.approx(0.5 * 0.7 * 0.1)
    assert "i2" not in got  # a recalled memory is reinforced, never activated
    assert spread({"i": 0.0}, {"i": {"j": 1.0}}) == {}


def test_top_five_recalled_spread() -> None:
    assert top_recalled(["a", "b", "a", "c", "d", "e", "f"]) == ["a", "b", "c", "d", "e"]


def test_activate_tops_up_decayed_strength_without_counting_a_recall() -> None:
    now = T0 + timedelta(days=10)
    s_ref, t_ref = activate(0.6, T0, 2, now, 0.1)
    assert t_ref == now
    assert s_ref == pytest.approx(decayed(0.6, T0, 2, now) + 0.1)
    assert activate(0.6, T0, 0, now, 5.0)[0] == 1.0  # capped
    assert activate(0.3, T0, 0, now, 0.1, pinned=True) == (1.0, T0)
    # An old event never moves the reference time back.
    s_old, t_old = activate(0.6, now, 0, T0, 0.1)
    assert t_old == now and s_old == pytest.approx(0.7)


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(unit, st.integers(0, 50), st.floats(0, 3650), unit)
def test_activation_keeps_strength_in_unit_interval_and_never_lowers_it(
    s: float, n: int, days: float, delta: float
) -> None:
    now = T0 + timedelta(days=days)
    before = decayed(s, T0, n, now)
    after, t_ref = activate(s, T0, n, now, delta)
    assert before <= after <= 1.0
    assert decayed(after, t_ref, n, now) == pytest.approx(after)


@given(
    st.dictionaries(st.sampled_from("abcde"), st.floats(0.0, 0.5), min_size=1),
    st.dictionaries(st.sampled_from("vwxyz"), st.floats(0.65, 1.0), min_size=1),
)
def test_spread_is_bounded_by_beta_times_deltas(
    deltas: dict[str, float], weights: dict[str, float]
) -> None:
    got = spread(deltas, {i: weights for i in deltas}, beta=0.5)
    bound = 0.5 * sum(deltas.values())
    assert all(0.0 < d <= bound + 1e-12 for d in got.values())
