"""The kinds of figure a family member states are parsed once per text (a memo: the same
members come back in the families of later memories), and the memo answers what the
parse does."""

from __future__ import annotations

from unittest import mock

from pcm_common.stores.vectors import ScoredPoint
from pcm_sweeper import judgement
from pcm_sweeper.judgement import routine_item, text_kinds


def _point(pid: str, text: str, ts: float) -> ScoredPoint:
    return ScoredPoint(pid, 0.9, {"text": text, "created_ts": ts})


def test_kinds_of_figures() -> None:
    assert text_kinds("Ran 5 km in 27:30 this morning") == {"distance", "duration"}
    assert text_kinds("Paid $12.50 for lunch") == {"money"}
    # Plain numbers and counts are no kind of figure a series is told by.
    assert text_kinds("Three coffees today") == frozenset()


def test_a_family_member_is_parsed_once() -> None:
    text_kinds.cache_clear()
    family = [
        _point("a", "Ran 5.2 km in 28:10 this morning", 1_000.0),
        _point("b", "Ran 4.8 km in 26:55 this morning", 2_000.0),
        _point("c", "Paid $4.20 for a coffee", 3_000.0),
    ]
    first = routine_item(_point("m1", "Ran 5 km in 27:30 this morning", 4_000.0), family)
    with mock.patch.object(
        judgement, "parse_quantities", side_effect=AssertionError("parsed again")
    ):
        # The same memory judged again, with the same family: nothing is parsed again, and
        # the routine's voters are the same.
        again = routine_item(_point("m1", "Ran 5 km in 27:30 this morning", 4_000.0), family)
    assert again == first
    # The runs vote for the run's routine; the coffee, a figure of another kind, does not.
    assert set(first[2]) == {"a", "b"}
