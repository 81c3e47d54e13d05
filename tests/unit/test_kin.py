"""Which routine lends a family its kin (`pcm_common.domain.kin`)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.kin import cosine, kin_routine, near_routine, on_schedule


def test_the_routine_of_most_of_the_family_by_closeness() -> None:
    routine_of = {"a": "R", "b": "R", "c": "S", "d": None}
    assert kin_routine([("a", 0.7), ("b", 0.65), ("c", 0.6), ("d", 0.9)], routine_of) == "R"
    # One member is enough when it is the only one placed.
    assert kin_routine([("a", 0.5), ("d", 0.9)], routine_of) == "R"


def test_one_near_copy_outweighs_a_fringe_of_loose_members() -> None:
    routine_of = {"own": "R", "x": "S", "y": "S", "z": "S"}
    family = [("own", 0.95), ("x", 0.47), ("y", 0.47), ("z", 0.46)]
    assert kin_routine(family, routine_of) == "R"


def test_a_family_split_between_routines_lends_nothing() -> None:
    routine_of = {"a": "R", "c": "S"}
    assert kin_routine([("a", 0.6), ("c", 0.6)], routine_of) is None
    assert kin_routine([("x", 0.9)], routine_of) is None
    assert kin_routine([], routine_of) is None


@given(st.lists(st.integers(-9, 9), min_size=3, max_size=3), st.floats(0.1, 10))
def test_cosine_ignores_scale(v: list[int], k: float) -> None:
    w = [k * x for x in v]
    if any(v):
        assert math.isclose(cosine(v, w), 1.0, rel_tol=1e-9)
    else:
        assert cosine(v, w) == 0.0


# -- a memory with no family: its nearer neighbours and the routine's schedule -----------

DAY = 86_400.0


def test_near_neighbours_point_to_a_routine_only_two_at_least() -> None:
    routine_of = {"a": "R", "b": "R", "c": "S", "d": None}
    assert near_routine([("a", 0.44), ("b", 0.40)], routine_of) == "R"
    assert near_routine([("a", 0.44), ("d", 0.40)], routine_of) is None  # one is no evidence
    assert near_routine([("a", 0.44), ("c", 0.40)], routine_of) is None  # split
    assert near_routine([], routine_of) is None


def test_a_regular_routine_is_due_about_one_interval_after_its_last_entry() -> None:
    weekly = [i * 7 * DAY for i in range(6)]
    last = weekly[-1]
    assert on_schedule(weekly, last + 7 * DAY)
    assert on_schedule(weekly, last + 6.2 * DAY)  # a strict routine: a day either way
    assert not on_schedule(weekly, last + 5 * DAY)
    assert not on_schedule(weekly, last + 9 * DAY)
    assert not on_schedule(weekly, last + 1 * DAY)  # a second entry in the same week
    assert not on_schedule(weekly, last + 40 * DAY)  # it had stopped


def test_a_looser_routine_allows_more_slack_up_to_a_third_of_its_interval() -> None:
    # Gaps of 5-9 days: a mean deviation of 1.6 days, times three, capped at 2.45 days.
    loose = [0.0, 5 * DAY, 14 * DAY, 19 * DAY, 28 * DAY, 33 * DAY, 42 * DAY]
    assert on_schedule(loose, 42 * DAY + 5 * DAY)
    assert on_schedule(loose, 42 * DAY + 9 * DAY)
    assert not on_schedule(loose, 42 * DAY + 10.5 * DAY)


def test_no_schedule_without_a_regular_routine() -> None:
    assert not on_schedule([0.0, 7 * DAY, 14 * DAY], 21 * DAY)  # too few entries
    erratic = [0.0, 1 * DAY, 30 * DAY, 31 * DAY, 90 * DAY, 91 * DAY, 200 * DAY]
    assert not on_schedule(erratic, 201 * DAY)
