"""The time a recall query names (pcm_common.domain.time_cues) and how recall merges the
search inside it with the search of the whole store (pcm_recall.candidates.within_span)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain import time_cues
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_recall.candidates import created_within, within_span

NOW = datetime(2023, 1, 10, 12, 0, tzinfo=UTC)  # a Tuesday


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "unit", "start", "end"),
    [
        ("What movie did Joanna watch on 1 May, 2022?", "day", day(2022, 5, 1), day(2022, 5, 2)),
        ("who came on October 13, 2023", "day", day(2023, 10, 13), day(2023, 10, 14)),
        ("notes of 2022-05-03", "day", day(2022, 5, 3), day(2022, 5, 4)),
        ("the 3rd of June", "day", day(2022, 6, 3), day(2022, 6, 4)),  # latest 3 June
        ("on January 9", "day", day(2023, 1, 9), day(2023, 1, 10)),
        ("What did Joanna do in January 2022?", "month", day(2022, 1, 1), day(2022, 2, 1)),
        ("since Dec 2021", "recent", day(2021, 12, 1), NOW),  # up to now
        ("what changed since 2021", "recent", day(2021, 1, 1), NOW),
        ("last January", "month", day(2022, 1, 1), day(2022, 2, 1)),  # not this one
        ("in January", "month", day(2023, 1, 1), day(2023, 2, 1)),
        ("on 29 February", "day", day(2020, 2, 29), day(2020, 3, 1)),  # the last leap year
        ("the deploy at 2023-01-05T10:00:00Z", "day", day(2023, 1, 5), day(2023, 1, 6)),
        ("31 April 2022", "month", day(2022, 4, 1), day(2022, 5, 1)),  # no such day
        ("what we did last summer", "season", day(2022, 6, 1), day(2022, 9, 1)),
        ("the party last weekend", "week", day(2023, 1, 7), day(2023, 1, 9)),
        ("errors in the last two weeks", "recent", day(2022, 12, 27), NOW),
        ("over the past few days", "recent", day(2023, 1, 7), NOW),
        ("twelve months ago", "month", day(2022, 1, 1), day(2022, 2, 1)),
        ("How often did I run in March?", "month", day(2022, 3, 1), day(2022, 4, 1)),
        ("plans made in mid-January", "month", day(2023, 1, 1), day(2023, 2, 1)),
        ("what changed in 2021", "year", day(2021, 1, 1), day(2022, 1, 1)),
        ("What state did Joanna visit in summer 2021?", "season", day(2021, 6, 1), day(2021, 9, 1)),
        ("the winter of 2021", "season", day(2020, 12, 1), day(2021, 3, 1)),
        ("What did I eat yesterday?", "day", day(2023, 1, 9), day(2023, 1, 10)),
        ("anything new today", "day", day(2023, 1, 10), day(2023, 1, 11)),
        ("what did we decide last week", "week", day(2023, 1, 2), day(2023, 1, 9)),
        ("this month so far", "month", day(2023, 1, 1), day(2023, 2, 1)),
        ("the bills of last year", "year", day(2022, 1, 1), day(2023, 1, 1)),
        ("what happened three days ago", "day", day(2023, 1, 7), day(2023, 1, 8)),
        ("two months ago", "month", day(2022, 11, 1), day(2022, 12, 1)),
        ("a couple of days ago", "day", day(2023, 1, 8), day(2023, 1, 9)),
        ("the call last Friday", "day", day(2023, 1, 6), day(2023, 1, 7)),
        ("the call last Tuesday", "day", day(2023, 1, 3), day(2023, 1, 4)),  # not today
    ],
)
def test_cues_name_their_span(query: str, unit: str, start: datetime, end: datetime) -> None:
    (cue,) = time_cues.cues(query, NOW)
    assert (cue.unit, cue.start, cue.end) == (unit, start, end)


@pytest.mark.parametrize(
    "query",
    [
        "What may I use for the API ids?",
        "this may be wrong, by may I mean might",
        "I ate 2000 calories after the run",
        "the 2022 World Cup",  # a name, not a time asked about
        "March 10k race results",
        "costs $2021 a month",
        "What kind of interests do Joanna and Nate share?",
        "ran 5k in 27:10",
        "31 February",
        "which of the 2 may be wrong?",
        "the last 3 may have failed",
        "retry after 2000 ms",
        "cap the prompt for 2048 tokens",
        "before 2024",  # all the time before, not one year
        "version 2.3 May",
        "in ſeptember 2022",  # the long s is no "s": only ASCII letters count
        "ſummer 2021 and last ſaturday, ſix days ago",
        "what must ship by March?",  # ahead: no memory was written then yet
        "the meeting on Monday",
    ],
)
def test_words_that_are_not_times(query: str) -> None:
    assert time_cues.cues(query, NOW) == []
    assert time_cues.window(query, NOW) is None


def test_a_finer_cue_is_not_read_again_by_a_coarser_one() -> None:
    (cue,) = time_cues.cues("Was the first half of September 2022 a good month?", NOW)
    assert cue.unit == "month" and cue.text == "September 2022"
    (cue,) = time_cues.cues("the dinner on 3 May 2023 in Paris", NOW)
    assert cue.unit == "day"


def test_a_text_of_many_dates_names_no_one_time() -> None:
    assert len(time_cues.cues("in May 2022 and in June 2022", NOW)) == 2
    assert time_cues.cues("log: " + ", ".join(f"{d} May 2022" for d in range(1, 9)), NOW) == []
    # Only the start of a long text is read.
    assert time_cues.cues("x " * time_cues.MAX_CHARS + "in May 2022", NOW) == []


@pytest.mark.parametrize(
    "now",
    [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, tzinfo=UTC), datetime(50, 6, 1)],
)
@pytest.mark.parametrize(
    "query", ["today", "yesterday", "last week", "in December", "this month", "99 years ago"]
)
def test_times_beyond_the_calendar_name_nothing_and_raise_nothing(
    query: str, now: datetime
) -> None:
    time_cues.window(query, now)  # no exception: a recall never fails on its words


def test_far_apart_cues_search_the_narrowest_alone() -> None:
    assert time_cues.window("in 1999, or was it yesterday?", NOW) == (day(2023, 1, 8), NOW)


def test_the_window_widens_each_span_and_joins_several() -> None:
    # Written from a day before to a few days after the day named.
    lo, hi = time_cues.window("on 1 May, 2022", NOW) or (None, None)
    assert (lo, hi) == (day(2022, 4, 30), day(2022, 5, 5))
    # Two cues: the union of both search spans.
    lo, hi = time_cues.window("between March 2022 and 5 June 2022", NOW) or (None, None)
    assert (lo, hi) == (day(2022, 2, 28), day(2022, 6, 9))
    # Never past `now`: what was said yesterday is searched up to now.
    assert time_cues.window("yesterday", NOW) == (day(2023, 1, 8), NOW)


queries = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyz MJOSDaynhuletr0123456789,-:ſK")),
    max_size=60,
)
instants = st.datetimes(
    min_value=datetime(1995, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(UTC)
)


@given(queries, instants)
def test_every_cue_is_a_nonempty_span_and_the_window_holds_it(query: str, now: datetime) -> None:
    found = time_cues.cues(query, now)
    window = time_cues.window(query, now)
    assert (window is None) == (not found)
    for cue in found:
        assert cue.start < cue.end
        assert cue.end - cue.start <= timedelta(days=366)
        assert cue.text and cue.text.lower() in query.lower()
        assert window is not None
        lo, hi = window
        assert lo <= cue.start - time_cues.BEFORE
        if cue.start <= now:  # a past time's span is searched up to now at least
            assert hi >= min(cue.end, now)


@given(queries, st.datetimes(timezones=st.just(UTC)))
def test_any_text_at_any_time_raises_nothing(query: str, now: datetime) -> None:
    time_cues.window(query, now)


@given(st.sampled_from(["yesterday", "last week", "last month", "last year", "today",
                        "three days ago", "two weeks ago", "last Monday", "past Sunday"]),
       instants)  # fmt: skip
def test_relative_cues_are_never_after_now(query: str, now: datetime) -> None:
    (cue,) = time_cues.cues(query, now)
    assert cue.start <= now
    lo, hi = cue.search_span(now)
    assert lo < hi <= now


def point(pid: str, fused: float | None, cos: float = 0.5) -> ScoredPoint:
    return ScoredPoint(id=pid, score=cos, payload={}, fused=fused)


def test_within_span_keeps_each_memory_once_at_its_better_rank_score() -> None:
    hits = [point("a", 0.18), point("b", 0.05), point("c", None)]
    inside = [point("b", 0.18), point("d", 0.10), point("a", 0.02), point("c", None)]
    merged = {p.id: p.fused for p in within_span(hits, inside, weight=1.0)}
    assert merged == {"a": 0.18, "b": 0.18, "c": None, "d": 0.10}
    # The weight scales only the scores from inside the span.
    merged = {p.id: p.fused for p in within_span(hits, inside, weight=0.5)}
    assert merged == {"a": 0.18, "b": 0.09, "c": None, "d": 0.05}
    assert within_span(hits, [], 1.0) == hits


def test_the_span_search_stays_inside_the_requests_own_range() -> None:
    span = (day(2022, 4, 30), day(2022, 5, 5))
    plain = created_within(Filter(must={"state": ["active"]}), span)
    assert plain is not None and plain.must == {"state": ["active"]}
    lo, hi = plain.ranges["created_ts"]
    assert lo == span[0].timestamp() and hi is not None and hi < span[1].timestamp()
    # A `created_before` inside the span cuts it; one before the span leaves nothing.
    cut = created_within(Filter(ranges={"created_ts": (None, day(2022, 5, 2).timestamp())}), span)
    assert cut is not None and cut.ranges["created_ts"] == (lo, day(2022, 5, 2).timestamp())
    assert created_within(Filter(ranges={"created_ts": (None, 0.0)}), span) is None
