"""Calendar keys for "created before" (pcm_common.stores.qdrant.edge.time_keys), and the
Edge adapter's stamping of payloads with them; the searches that use them:
tests/unit/test_created_until.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.memory import DERIVED_FIELDS
from pcm_common.stores.qdrant.edge import time_keys

UNTIL = 2101
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HOUR_US = 3_600_000_000
# Whole microseconds from 1990 to the end of 2100: datetimes hold no finer time.
micros = st.integers(min_value=631_152_000 * 10**6, max_value=4_133_980_799 * 10**6)


def at(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def excluded(created: int, before: int) -> bool:
    """Whether a memory created at `created` is left out of a search for those created
    before `before` (both in microseconds since the epoch)."""
    return bool(set(time_keys.keys(at(created))) & set(time_keys.later_than(at(before), UNTIL)))


@given(micros, micros)
def test_earlier_memories_are_never_excluded(a: int, b: int) -> None:
    assert not excluded(min(a, b), max(a, b))


@given(micros, micros)
def test_later_memories_are_excluded_unless_in_the_same_hour(a: int, b: int) -> None:
    before, later = min(a, b), max(a, b)
    assert excluded(later, before) == (before // HOUR_US != later // HOUR_US)


def test_keys_and_later_keys_at_a_month_end() -> None:
    feb29 = datetime(2024, 2, 29, 22, 30, tzinfo=UTC)
    assert time_keys.keys(feb29) == ["y2024", "m2024-02", "d2024-02-29", "h2024-02-29T22"]
    assert time_keys.later_than(feb29, 2025) == [
        "y2025",
        *[f"m2024-{m:02d}" for m in range(3, 13)],
        "h2024-02-29T23",
    ]
    # The last hour of a year, with nothing after it up to `until_year`: no keys.
    assert time_keys.later_than(datetime(2030, 12, 31, 23, tzinfo=UTC), 2030) == []
    # A microsecond before a new year stays in its year; other zones count in UTC.
    eve = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    assert time_keys.keys(eve)[0] == "y9999"
    berlin = datetime(2025, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    assert time_keys.keys(berlin)[3] == "h2024-12-31T23"


def test_the_adapter_stamps_payloads_with_created_at() -> None:
    """The keys of a payload's ISO `created_at` are those of the time itself (naive: UTC),
    and they are fields a memory's readers leave out (`DERIVED_FIELDS`)."""
    late = datetime(2024, 2, 29, 22, 59, 59, 999_999, tzinfo=UTC)
    for written in (late.isoformat(), late.replace(tzinfo=None).isoformat(), late):
        got = time_keys.stamped({"created_at": written, "text": "x"})
        assert got == {"created_at": written, "text": "x", time_keys.FIELD: time_keys.keys(late)}
    # Nothing to read the time from: the payload as it is.
    for payload in ({"text": "x"}, {"created_at": "not a time"}, {"created_at": None}):
        assert time_keys.stamped(payload) == payload
    assert time_keys.FIELD in DERIVED_FIELDS
