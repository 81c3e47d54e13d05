"""The time a recall query names ("in January 2022", "on 1 May", "last week", "yesterday").

Similarity search is blind to a query's time: "what did Joanna do in April 2022?" is as
close to an April memory as to one from any other month that shares its words. `window`
finds the span of time a query names, relative to the recall's `now`, so that recall can
also search inside it (`pcm_recall.service`).

Why not a date library: `dateparser.search.search_dates` and `parsedatetime` both read the
modal "may" and the pronoun "we" as dates, and return one instant, not the day, week,
month or year the words name. The grammar here is small and strict instead: a month name
counts only next to a day number, a year, or a word that makes it a time ("in March",
"early June"); a year only as 1900-2099 standing alone.

Every span is widened by `BEFORE` and `AFTER` (`Cue.search_span`): memories are mostly
written at or after what they tell ("watched it last night", the day's notes written the
next morning), seldom before. "since March" runs up to now. All times are UTC, like
`created_at`. Only ASCII letters are matched (`re.ASCII`: with plain `re.I` the long s
"ſ" matches "s", and "ſeptember" is no month name).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pcm_common.domain.clock import as_utc

BEFORE = timedelta(days=1)
# Told later: a day or a week within days, a month or a season within a week, a year within
# two.
AFTER = {
    "day": timedelta(days=3),
    "week": timedelta(days=3),
    "month": timedelta(days=7),
    "season": timedelta(days=7),
}
AFTER_DEFAULT = timedelta(days=14)
# Cues further apart than this (a year in the last century and "yesterday") are not one
# time: the most specific alone is searched.
MAX_HULL = timedelta(days=800)
# A question names a time or two; a text naming more (a pasted log, a list of dates) is
# not asking about one time, and reading it whole would cost time for nothing.
MAX_CUES = 4
MAX_CHARS = 2_000

_F = re.IGNORECASE | re.ASCII
_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name and name != "May"}
_MONTHS["sept"] = 9
_MONTH = r"(?P<{}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
# Not the end of a version or a decimal ("2.3 May", "1,5 June").
_DAY = r"(?<![\d.,:/])(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(?P<s>spring|summer|autumn|fall|winter)"
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 4,
}  # fmt: skip
_COUNT = r"(?P<count>\d{1,2}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
# Words that make a bare month or a year a time: only words that look back ("in March",
# "early June", "last May", "since 2021"), as a bare month is taken to be the latest one;
# "by March", "until June" or "before 2024" look ahead, or name all the time before.
_LEAD = r"(?P<lead>in|during|since|of|early|late|mid-?|last|throughout|from|for)"
_GAP = r"(?:\s+|(?<=-))"  # "in March", "mid-March"
# A number of these is a quantity, not a year ("after 2000 ms", "for 2048 tokens").
_UNITS = (
    r"(?!\s*(?:ms|s|secs?|seconds?|mins?|minutes?|hours?|tokens?|bytes?|bits?|[kmgt]i?b|"
    r"px|rpm|k?cal|calories|m|km|meters?|metres?|miles?|ft|feet|words?|char(?:acter)?s?|"
    r"lines?|rows?|items?|users?|steps?|points?|records?|requests?|times|dollars?|euros?|"
    r"usd|eur)\b)"
)


def _p(template: str, *names: str) -> str:
    return template.format(*names)


# Most specific first: a span already read is not read again by a coarser pattern.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"(?<![\d.])(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)(?!\d)")),
    (
        "dmy",
        re.compile(rf"\b{_p(_DAY, 'd')}\s+(?:of\s+)?{_p(_MONTH, 'm')},?\s+{_p(_YEAR, 'y')}\b", _F),
    ),
    ("mdy", re.compile(rf"\b{_p(_MONTH, 'm')}\s+{_p(_DAY, 'd')},?\s+{_p(_YEAR, 'y')}\b", _F)),
    ("season", re.compile(rf"\b{_SEASON}\s+(?:of\s+)?{_p(_YEAR, 'y')}\b", _F)),
    ("my", re.compile(rf"\b{_p(_MONTH, 'm')},?\s+(?:of\s+)?{_p(_YEAR, 'y')}\b", _F)),
    ("dm", re.compile(rf"\b{_p(_DAY, 'd')}\s+(?:of\s+)?{_p(_MONTH, 'm')}(?![\w-])", _F)),
    ("md", re.compile(rf"\b{_p(_MONTH, 'm')}\s+{_p(_DAY, 'd')}\b(?!\s*(?:[:.]\d|%))", _F)),
    ("m", re.compile(rf"\b{_LEAD}{_GAP}(?:the\s+)?{_p(_MONTH, 'm')}(?![\w-])", _F)),
    (
        "y",
        re.compile(
            rf"\b{_LEAD}{_GAP}(?:the\s+year\s+)?{_p(_YEAR, 'y')}(?![\w%:/-]|[.,]\d){_UNITS}", _F
        ),
    ),
    ("last_season", re.compile(rf"\b(?:last|past)\s+{_SEASON}\b", _F)),
    ("today", re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _F)),
    ("yesterday", re.compile(r"\b(?:yesterday|last\s+night)\b", _F)),
    ("weekend", re.compile(r"\b(?:last|past)\s+weekend\b", _F)),
    ("ago", re.compile(rf"\b{_COUNT}\s+(?P<unit>day|week|month|year)s?\s+ago\b", _F)),
    ("recent", re.compile(rf"\b(?:last|past)\s+{_COUNT}\s+(?P<unit>day|week|month)s?\b", _F)),
    ("this", re.compile(r"\b(?P<which>this|last|past)\s+(?P<unit>week|month|year)\b", _F)),
    # "last Friday" only: "on Monday" as often means the coming one.
    ("weekday", re.compile(r"\b(?:last|past)\s+(?P<w>" + "|".join(_WEEKDAYS) + r")\b", _F)),
]
# Kinds whose month may be the modal verb when written "may" without a year.
_BARE_MONTH = frozenset({"dm", "md", "m"})


@dataclass(frozen=True)
class Cue:
    """A span of time a query names: [start, end), its unit ("day", "week", "month",
    "season", "year", "recent") and the words that named it."""

    start: datetime
    end: datetime
    unit: str
    text: str

    def search_span(self, now: datetime) -> tuple[datetime, datetime]:
        """The span memories about this time were likely written in: from `BEFORE` ahead
        of it to `AFTER` past it, never past `now`."""
        after = AFTER.get(self.unit, AFTER_DEFAULT)
        return self.start - BEFORE, min(self.end + after, max(now, self.start))


def _day(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime(y, m, d, tzinfo=UTC)
    except ValueError:  # "31 February", "0 May"
        return None


def _first(y: int, m: int, later: int = 0) -> datetime:
    """The first day of the month `later` months after month `m` (1-12) of year `y`."""
    y, m0 = divmod(y * 12 + m - 1 + later, 12)
    return datetime(y, m0 + 1, 1, tzinfo=UTC)


def _month(y: int, m: int) -> tuple[datetime, datetime]:
    """[first day, first day of the next month) of month `m` (1-12) of year `y`."""
    return _first(y, m), _first(y, m, 1)


def _months_back(now: datetime, n: int) -> tuple[datetime, datetime]:
    start = _first(now.year, now.month, -n)
    return _month(start.year, start.month)


def _year(y: int) -> tuple[datetime, datetime]:
    return datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC)


def _latest_day(m: int, d: int, now: datetime) -> datetime | None:
    """The latest (month, day) at or before `now`: "on 3 May" asked in January is last
    year's, "29 February" the last leap year's."""
    y = now.year if (m, d) <= (now.month, now.day) else now.year - 1
    for year in range(y, y - 8, -1):
        found = _day(year, m, d)
        if found is not None:
            return found
    return None


def _season(y: int, first: int) -> tuple[datetime, datetime]:
    """Meteorological seasons of the northern hemisphere; winter `y` is the one that ends
    in `y` (December `y-1` to February `y`)."""
    start = _first(y - 1, 12) if first == 12 else _first(y, first)
    return start, _first(start.year, start.month, 3)


_CALENDAR = ("iso", "dmy", "mdy", "dm", "md", "my", "m", "season", "last_season", "y")
_Span = tuple[datetime, datetime, str]


def _span(kind: str, g: dict[str, str], now: datetime) -> _Span | None:
    """The [start, end) a cue of `kind` names with its unit, or None: a named date, month,
    season or year, else a time counted from `now`."""
    if kind in _CALENDAR:
        return _calendar_span(kind, g, now)
    return _relative_span(kind, g, now)


def _calendar_span(kind: str, g: dict[str, str], now: datetime) -> _Span | None:
    if kind in ("iso", "dmy", "mdy", "dm", "md"):
        m = int(g["m"]) if kind == "iso" else _MONTHS[g["m"].lower()]
        d = int(g["d"])
        start = _day(int(g["y"]), m, d) if g.get("y") else _latest_day(m, d, now)
        return None if start is None else (start, start + timedelta(days=1), "day")
    if kind in ("my", "m"):
        m = _MONTHS[g["m"].lower()]
        if g.get("y"):
            y = int(g["y"])
        elif g.get("lead", "").lower() == "last":  # "last March": not the month in progress
            y = now.year if m < now.month else now.year - 1
        else:
            y = now.year if m <= now.month else now.year - 1
        return (*_month(y, m), "month")
    if kind == "season":
        return (*_season(int(g["y"]), _SEASONS[g["s"].lower()]), "season")
    if kind == "last_season":  # the latest one that has ended
        first = _SEASONS[g["s"].lower()]
        for y in (now.year + 1, now.year, now.year - 1):
            start, end = _season(y, first)
            if end <= now:
                return start, end, "season"
        return None
    return (*_year(int(g["y"])), "year")


def _relative_span(kind: str, g: dict[str, str], now: datetime) -> _Span | None:
    day = timedelta(days=1)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - now.weekday() * day  # this week's
    if kind == "today":
        return today, today + day, "day"
    if kind == "yesterday":
        return today - day, today, "day"
    if kind == "weekend":  # the Saturday and Sunday before this week's Monday
        return monday - 2 * day, monday, "week"
    if kind in ("ago", "recent"):
        return _counted_span(kind, g, now, today)
    if kind == "this":
        unit, last = g["unit"].lower(), g["which"].lower() != "this"
        if unit == "week":
            return (monday - 7 * day, monday, "week") if last else (monday, today + day, "week")
        if unit == "month":
            return (*_months_back(now, int(last)), "month")
        return (*_year(now.year - int(last)), "year")
    if kind == "weekday":
        back = (now.weekday() - _WEEKDAYS[g["w"].lower()]) % 7 or 7
        start = today - back * day
        return start, start + day, "day"
    return None


def _counted_span(kind: str, g: dict[str, str], now: datetime, today: datetime) -> _Span:
    """A count of units back: "three weeks ago" (that week), "the last two weeks" (to now)."""
    day = timedelta(days=1)
    n = _NUMBERS.get(g["count"].lower()) or int(g["count"])
    unit = g["unit"].lower()
    if kind == "recent":  # "the last two weeks": up to now
        step = {"day": day, "week": 7 * day, "month": 30 * day}[unit]
        return today - n * step, now, "recent"
    if unit == "day":
        start = today - n * day
        return start, start + day, "day"
    if unit == "week":
        start = today - timedelta(weeks=n) - 3 * day
        return start, start + 7 * day, "week"
    if unit == "month":
        return (*_months_back(now, n), "month")
    return (*_year(now.year - n), "year")


def _cue(kind: str, match: re.Match[str], query: str, now: datetime) -> Cue | None:
    groups = {k: v for k, v in match.groupdict().items() if v}
    if kind in _BARE_MONTH and groups.get("m") == "may":
        return None  # "which of the 2 may be wrong", "this may be": the verb
    try:
        span = _span(kind, groups, now)
    except (ValueError, OverflowError):  # a time before year 1 or after 9999
        return None
    if span is None:
        return None
    start, end, unit = span
    # "since March", "since 2021": from then up to now.
    since = groups.get("lead", "").lower() == "since" or re.search(
        r"\bsince\s+(?:the\s+)?$", query[: match.start()], _F
    )
    if since and start < now:
        end, unit = max(end, now), "recent"
    return Cue(start, end, unit, match.group(0).strip())


def cues(query: str, now: datetime) -> list[Cue]:
    """Every span of time the first `MAX_CHARS` of `query` name, in the order found (most
    specific pattern first; a part read by one pattern is not read again by a coarser
    one); none when they name more than `MAX_CUES`."""
    now = as_utc(now)
    query = query[:MAX_CHARS]
    taken: list[tuple[int, int]] = []
    out: list[Cue] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(query):
            a, b = match.span()
            if any(a < tb and ta < b for ta, tb in taken):
                continue
            cue = _cue(kind, match, query, now)
            if cue is None:
                continue
            taken.append((a, b))
            out.append(cue)
            if len(out) > MAX_CUES:
                return []
    return out


def window(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The span of creation times to search for the time(s) `query` names, or None when it
    names none: the union of its cues' search spans (`Cue.search_span`), or the narrowest
    one alone when together they would cover more than `MAX_HULL`."""
    found = cues(query, now)
    if not found:
        return None
    now = as_utc(now)
    try:
        spans = [c.search_span(now) for c in found]
        hull = min(s for s, _ in spans), max(e for _, e in spans)
        if hull[1] - hull[0] <= MAX_HULL:
            return hull
        return min(spans, key=lambda s: s[1] - s[0])
    except OverflowError:  # widened past year 1 or 9999
        return None
