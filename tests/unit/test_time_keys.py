"""Calendar keys for "created before" (pcm_common.domain.time_keys) and the family search's
completeness rule (pcm_common.domain.surprisal.family_complete)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain import surprisal as sp
from pcm_common.domain import time_keys

UNTIL = 2101
# Epoch seconds from 1990 to the end of 2100, with sub-second parts.
times = st.floats(min_value=631_152_000.0, max_value=4_133_980_799.0)


def excluded(at: float, before: float) -> bool:
    """Whether a memory created at `at` is left out of a search for those before `before`."""
    return bool(set(time_keys.keys(at)) & set(time_keys.later_than(before, UNTIL)))


@given(times, times)
def test_earlier_memories_are_never_excluded(a: float, b: float) -> None:
    earlier, ts = min(a, b), max(a, b)
    assert not excluded(earlier, ts)


@given(times, times)
def test_later_memories_are_excluded_unless_in_the_same_hour(a: float, b: float) -> None:
    ts, later = min(a, b), max(a, b)
    same_hour = int(ts // 3600) == int(later // 3600)
    assert excluded(later, ts) == (not same_hour)


def test_keys_and_later_keys_at_a_month_end() -> None:
    ts = datetime(2024, 2, 29, 22, 30, tzinfo=UTC).timestamp()
    assert time_keys.keys(ts) == ["y2024", "m2024-02", "d2024-02-29", "h2024-02-29T22"]
    later = time_keys.later_than(ts, 2025)
    assert later == [
        "y2025",
        *[f"m2024-{m:02d}" for m in range(3, 13)],
        "h2024-02-29T23",
    ]
    # The last hour of a year, with nothing after it up to `until_year`: no keys.
    assert time_keys.later_than(datetime(2030, 12, 31, 23, tzinfo=UTC).timestamp(), 2030) == []


def test_family_complete() -> None:
    # Enough eligible hits, whatever else came back.
    assert sp.family_complete([0.9] * 20, 12, limit=20)
    # Fewer hits than asked: nothing else matched the search.
    assert sp.family_complete([0.9] * 7, 3, limit=20)
    # The last hit is below the threshold: no nearer memory was left out.
    assert sp.family_complete([0.9] * 19 + [0.3], 5, limit=20)
    # A full page of near hits, too few of them earlier: it could miss family members.
    assert not sp.family_complete([0.9] * 20, 11, limit=20)
    assert not sp.family_complete([0.9] * 20, 0, limit=20, min_cos=0.45)
