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
next morning), seldom before. All times are UTC, like `created_at`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

BEFORE = timedelta(days=1)
# Told later: a day or a week within days, a month or a year within a week or two.
AFTER = {
    "day": timedelta(days=3),
    "week": timedelta(days=3),
    "month": timedelta(days=7),
    "season": timedelta(days=7),
}
AFTER_DEFAULT = timedelta(days=14)

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name and name != "May"}
_MONTHS["sept"] = 9
_MONTH = r"(?P<{}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
}  # fmt: skip
_COUNT = r"(?P<count>\d{1,2}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"


# Words that make a year a time ("since 2021", "by 2020"), and those that make a bare month
# one: only words that look back ("in March", "early June", "last May"), as the month is
# taken to be the latest one; "by March" or "until June" mostly look ahead, to a time no
# memory was written in yet.
_LEAD_MONTH = r"(?:in|during|since|of|early|late|mid-?|last|throughout|from)"
_LEAD_YEAR = (
    r"(?:in|during|since|until|till|before|after|by|of|early|late|mid-?|throughout|from|for)"
)
_GAP = r"(?:\s+|(?<=-))"  # "in March", "mid-March"


def _p(template: str, *names: str) -> str:
    return template.format(*names)


# Most specific first: a span already read is not read again by a coarser pattern.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b")),
    (
        "dmy",
        re.compile(
            rf"\b{_p(_DAY, 'd')}\s+(?:of\s+)?{_p(_MONTH, 'm')},?\s+{_p(_YEAR, 'y')}\b", re.I
        ),
    ),
    (
        "mdy",
        re.compile(rf"\b{_p(_MONTH, 'm')}\s+{_p(_DAY, 'd')},?\s+{_p(_YEAR, 'y')}\b", re.I),
    ),
    (
        "season",
        re.compile(
            rf"\b(?P<s>spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_p(_YEAR, 'y')}\b", re.I
        ),
    ),
    ("my", re.compile(rf"\b{_p(_MONTH, 'm')},?\s+(?:of\s+)?{_p(_YEAR, 'y')}\b", re.I)),
    ("dm", re.compile(rf"\b{_p(_DAY, 'd')}\s+(?:of\s+)?{_p(_MONTH, 'm')}(?![\w-])", re.I)),
    ("md", re.compile(rf"\b{_p(_MONTH, 'm')}\s+{_p(_DAY, 'd')}\b(?!\s*(?:[:.]\d|%))", re.I)),
    (
        "m",
        re.compile(
            rf"\b{_LEAD_MONTH}{_GAP}(?:the\s+)?{_p(_MONTH, 'm')}(?![\w-])",
            re.I,
        ),
    ),
    (
        "y",
        re.compile(
            rf"\b{_LEAD_YEAR}{_GAP}(?:the\s+year\s+)?{_p(_YEAR, 'y')}(?![\w%:/-]|[.,]\d)", re.I
        ),
    ),
    ("today", re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", re.I)),
    ("yesterday", re.compile(r"\b(?:yesterday|last\s+night)\b", re.I)),
    ("ago", re.compile(rf"\b{_COUNT}\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.I)),
    ("this", re.compile(r"\b(?P<which>this|last|past)\s+(?P<unit>week|month|year)\b", re.I)),
    (
        "weekday",
        re.compile(
            # "last Friday" only: "on Monday" as often means the coming one.
            r"\b(?:last|past)\s+(?P<w>" + "|".join(_WEEKDAYS) + r")\b",
            re.I,
        ),
    ),
]


@dataclass(frozen=True)
class Cue:
    """A span of time a query names: [start, end), its unit ("day", "week", "month",
    "year") and the words that named it."""

    start: datetime
    end: datetime
    unit: str
    text: str

    def search_span(self, now: datetime) -> tuple[datetime, datetime]:
        """The span memories about this time were likely written in: from `BEFORE` ahead
        of it to `AFTER` past it, never past `now`."""
        after = AFTER.get(self.unit, AFTER_DEFAULT)
        return self.start - BEFORE, min(self.end + after, max(now, self.start))


def _utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def _day(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime(y, m, d, tzinfo=UTC)
    except ValueError:  # "31 February", "0 May"
        return None


def _month(y: int, m: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, 1, tzinfo=UTC)
    end = datetime(y + 1, 1, 1, tzinfo=UTC) if m == 12 else datetime(y, m + 1, 1, tzinfo=UTC)
    return start, end


def _latest_year(m: int, d: int, now: datetime) -> int:
    """The year of the latest (month, day) at or before `now`: "on 3 May" asked in
    January is last year's."""
    return now.year if (m, d) <= (now.month, now.day) else now.year - 1


def _span(kind: str, g: dict[str, str], now: datetime) -> tuple[datetime, datetime, str] | None:
    day = timedelta(days=1)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if kind in ("iso", "dmy", "mdy", "dm", "md"):
        m = int(g["m"]) if kind == "iso" else _MONTHS[g["m"].lower()]
        d = int(g["d"])
        y = int(g["y"]) if g.get("y") else _latest_year(m, d, now)
        start = _day(y, m, d)
        return None if start is None else (start, start + day, "day")
    if kind in ("my", "m"):
        m = _MONTHS[g["m"].lower()]
        y = int(g["y"]) if g.get("y") else (now.year if m <= now.month else now.year - 1)
        return (*_month(y, m), "month")
    if kind == "season":
        # Meteorological seasons of the northern hemisphere; "winter 2021" is the one that
        # ends in 2021 (December 2020 to February 2021).
        y, first = int(g["y"]), _SEASONS[g["s"].lower()]
        start = (
            datetime(y - 1, 12, 1, tzinfo=UTC) if first == 12 else datetime(y, first, 1, tzinfo=UTC)
        )
        end_y, end_m = divmod(start.year * 12 + start.month - 1 + 3, 12)
        return start, datetime(end_y, end_m + 1, 1, tzinfo=UTC), "season"
    if kind == "y":
        y = int(g["y"])
        return datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC), "year"
    if kind == "today":
        return today, today + day, "day"
    if kind == "yesterday":
        return today - day, today, "day"
    if kind == "ago":
        n = _NUMBERS.get(g["count"].lower()) or int(g["count"])
        unit = g["unit"].lower()
        if unit == "day":
            start = today - n * day
            return start, start + day, "day"
        if unit == "week":
            start = today - timedelta(weeks=n) - 3 * day
            return start, start + 7 * day, "week"
        if unit == "month":
            y, m = divmod(now.year * 12 + now.month - 1 - n, 12)
            return (*_month(y, m + 1), "month")
        return (
            datetime(now.year - n, 1, 1, tzinfo=UTC),
            datetime(now.year - n + 1, 1, 1, tzinfo=UTC),
            "year",
        )
    if kind == "this":
        unit, last = g["unit"].lower(), g["which"].lower() != "this"
        if unit == "week":
            monday = today - now.weekday() * day
            return (monday - 7 * day, monday, "week") if last else (monday, today + day, "week")
        if unit == "month":
            y, m = divmod(now.year * 12 + now.month - 1 - int(last), 12)
            return (*_month(y, m + 1), "month")
        y = now.year - int(last)
        return datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC), "year"
    if kind == "weekday":
        back = (now.weekday() - _WEEKDAYS[g["w"].lower()]) % 7 or 7
        start = today - back * day
        return start, start + day, "day"
    return None


# A question names a time or two; a text naming more (a pasted log, a list of dates) is
# not asking about one time, and reading it whole would cost time for nothing.
MAX_CUES = 4
MAX_CHARS = 2_000


def cues(query: str, now: datetime) -> list[Cue]:
    """Every span of time the first `MAX_CHARS` of `query` name, in the order found (most
    specific pattern first; a part read by one pattern is not read again by a coarser
    one); none when they name more than `MAX_CUES`."""
    now = _utc(now)
    query = query[:MAX_CHARS]
    taken: list[tuple[int, int]] = []
    out: list[Cue] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(query):
            a, b = match.span()
            if any(a < tb and ta < b for ta, tb in taken):
                continue
            if kind == "m" and match.group("m") == "may":
                continue  # "this may be", "by may": the modal verb, not the month
            span = _span(kind, {k: v for k, v in match.groupdict().items() if v}, now)
            if span is None:
                continue
            taken.append((a, b))
            out.append(Cue(span[0], span[1], span[2], match.group(0).strip()))
            if len(out) > MAX_CUES:
                return []
    return out


def window(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The span of creation times to search for the time(s) `query` names, or None when it
    names none: the union of its cues' search spans (`Cue.search_span`)."""
    found = cues(query, now)
    if not found:
        return None
    now = _utc(now)
    spans = [c.search_span(now) for c in found]
    return min(s for s, _ in spans), max(e for _, e in spans)
