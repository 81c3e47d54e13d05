"""Which routine lends a family its kin (`pcm_common.domain.kin`)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.kin import cosine, kin_routine


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
