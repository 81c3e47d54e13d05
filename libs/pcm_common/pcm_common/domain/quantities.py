"""Quantities stated in free text, with their kind and unit, normalised for comparison.

One regular-expression scan plus one merge pass over its matches: linear in the text.
Handled forms: currency symbols and codes before or after the amount ("£45", "45,10 €",
"EUR 45.10"), thousands and decimal separators in either convention, ranges ("7-8 hours",
"7 to 8 h"), readings ("128/82"), scores ("7/10"), hyphenated and attached units ("5-km",
"45min", "1h20"), clock durations ("45:10", "1:20:05"), times of day ("7:30pm",
"at 19:30"), percentages, temperatures, paces and rates, counts of a noun ("3 coffees"),
small number words ("two hours", "an hour and a half"). Dates, years and ordinals are
not quantities: they say when, not how much.

A quantity's `key` is what it may be compared with: the kind, the currency for money, the
part of a reading. Values are in the kind's base unit (seconds, metres, kilograms, litres,
°C, minutes after midnight), so "90 min" and "1.5 hours" compare equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from pcm_common.domain.number_words import NUMBER, word_value


class Quantity(NamedTuple):
    """A stated figure."""

    key: str  # what it compares with: "duration", "money:GBP", "reading:1", "count:coffee"
    value: float  # in the kind's base unit
    text: str  # as stated

    @property
    def kind(self) -> str:
        return self.key.split(":", 1)[0]


# unit word -> (kind, multiplier to the kind's base unit)
_UNIT_TABLE: tuple[tuple[str, str, float], ...] = (
    ("ms msec millisecond milliseconds", "duration", 0.001),
    ("s sec secs second seconds", "duration", 1.0),
    ("m min mins minute minutes", "duration", 60.0),
    ("h hr hrs hour hours", "duration", 3600.0),
    ("d day days", "duration", 86400.0),
    ("wk wks week weeks", "duration", 604800.0),
    ("km kms kilometre kilometres kilometer kilometers k", "distance", 1000.0),
    ("mi mile miles", "distance", 1609.344),
    ("metre metres meter meters", "distance", 1.0),
    ("cm", "distance", 0.01),
    ("ft foot feet", "distance", 0.3048),
    ("kg kgs kilo kilos kilogram kilograms", "weight", 1.0),
    ("lb lbs pound pounds", "weight", 0.45359237),
    ("st stone stones", "weight", 6.35029318),
    ("g gr gram grams", "weight", 0.001),
    ("mg milligram milligrams", "dose", 1.0),
    ("mcg µg microgram micrograms", "dose", 0.001),
    ("l litre litres liter liters", "volume", 1.0),
    ("ml millilitre millilitres milliliter milliliters", "volume", 0.001),
    ("cl", "volume", 0.01),
    ("pint pints", "volume", 0.568),
    ("gal gals gallon gallons", "volume", 3.785411784),  # US gallons
    ("oz ounce ounces floz", "volume", 0.0295735),  # fluid ounces: drinks, not weights
    ("kcal cal cals calorie calories", "energy", 1.0),
    ("kwh", "electricity", 1.0),
    ("kb", "data", 0.001),
    ("mb", "data", 1.0),
    ("gb", "data", 1000.0),
    ("tb", "data", 1e6),
    ("bpm beats/min", "heart_rate", 1.0),
    ("mmhg", "pressure", 1.0),
    ("mg/dl", "glucose", 1.0),
    ("mmol/l", "glucose", 18.0),
    ("km/h kph", "speed", 1.0),
    ("mph", "speed", 1.609344),
    ("°c ºc degc celsius", "temperature", 1.0),
    ("degrees degree °", "temperature", 1.0),
    ("% percent per-cent", "percent", 1.0),
)
UNITS: dict[str, tuple[str, float]] = {
    name: (kind, mult) for names, kind, mult in _UNIT_TABLE for name in names.split()
}
_FAHRENHEIT = frozenset({"°f", "ºf", "degf", "fahrenheit"})
# "m" alone is minutes after a duration ("1h 20m"), metres otherwise; see `_unit`.
_AMBIGUOUS_M = "m"

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
CURRENCY_CODES = frozenset(
    "USD EUR GBP JPY CHF CAD AUD NZD INR CNY SEK NOK DKK PLN CZK HUF ZAR BRL MXN SGD HKD".split()
)
_CURRENCY_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "bucks": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "quid": "GBP",
    "yen": "JPY",
    "kr": "KR",  # Swedish, Norwegian or Danish: written alike, compared alike
    "rs": "INR",
}

# Words that only qualify a figure: a phrasing may add or drop them freely.
UNIT_WORDS = (
    frozenset(UNITS)
    | _FAHRENHEIT
    | {"am", "pm", "o'clock", "x"}
    | {c.lower() for c in CURRENCY_CODES}
    | frozenset(_CURRENCY_WORDS)
)

_CUR_SYM = r"[$€£¥₹]"
_CODES = "|".join(sorted(CURRENCY_CODES))
_NUM = r"\d+(?:[.,'\u202f]\d+)*"
_UNIT_RE = (
    r"°\s?[CF]|º[CF]|mg/dl|mmol/l|km/h|kwh|mmhg|per[- ]cent|%"
    r"|beats?\s(?:per|a|an)\s(?:minute|min)"
    r"|[a-zA-Zµ]+(?:'[a-z]+)?"
)
# Units a price may be quoted per: "$2.544 per L" is no amount paid, and compares only with
# other prices per litre.
_RATE_UNITS = r"l|litres?|liters?|gal|gallons?|kwh|kg|kilos?|lbs?|hr|hrs|hours?|h"
_RATE_AFTER = re.compile(rf"\s?(?:/|per\s)\s?(?P<per_unit>{_RATE_UNITS})\b", re.IGNORECASE)
_SCAN = re.compile(
    rf"""
    (?P<pre>{_CUR_SYM}|\b(?:{_CODES})\b)?\s?
    (?<![\w.,:-])(?<!\d/)(?<!//)                  # not a date's or a path's later part
    (?P<num>{_NUM})
    (?:
        (?P<clock>(?::\d{{2}}){{1,2}})                       # 45:10, 1:20:05, 7:30
      | (?P<slash>/\d+(?:[.,]\d+)?)(?!/)                      # 128/82, 7/10
      | (?P<hm>h\s?\d{{1,2}})(?:m(?:in)?)?\b                  # 1h20, 1h 20m
      | \s?(?:-|–|to)\s?(?P<hi>{_NUM})(?![/:])                # 7-8, 7 to 8
    )?
    (?P<per>\s?(?:min\s?)?/\s?(?:km|mi|mile)\b)?                # 5:30/km: a pace
    (?P<rate>\s?(?:/|per\s|an?\s)\s?(?P<per_unit>{_RATE_UNITS})\b)?   # $2.54/L, £45 an hour
    (?!\d|/\d)                                         # "Hall/60m/paid": fields
    (?:(?:-|\s)?(?P<unit>{_UNIT_RE}))?
    (?:\s?(?P<post>{_CUR_SYM}|\b(?:{_CODES})\b))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
# Fractions of a unit: "half an hour", "three quarters of an hour", "a third of a mile",
# and a whole number with one ("seven and three-quarter hours", "an hour and a quarter").
_FRACTION = r"half|quarter|three[\s-]quarters?|third|two[\s-]thirds"
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "three quarter": 0.75, "third": 1 / 3,
              "two third": 2 / 3}  # fmt: skip
_WORD_NUM = re.compile(
    rf"\b(?P<w>(?:an?\s+|one\s+)?(?:{_FRACTION})(?:\s+of)?(?:\s+an?)?|an?|a\s+couple\s+of|{NUMBER})"
    rf"(?P<half>\s+and\s+(?:an?\s+)?(?:{_FRACTION}))?\s+(?P<unit>hours?|hrs?|minutes?|mins?|"
    r"days?|weeks?|km|kilometres?|kilometers?|miles?|kilos?|kg|pounds|lbs?|litres?|liters?)\b"
    rf"(?P<half2>\s+and\s+(?:an?\s+)?(?:{_FRACTION}))?",
    re.IGNORECASE,
)
_WORD_COUNT = re.compile(rf"\b(?P<w>{NUMBER})\s+(?P<noun>[a-z]{{3,}}s)\b", re.IGNORECASE)
_TIME_PREFIX = re.compile(r"\b(?:at|by|from|until|till|around|before|after|since)\s+$", re.I)
_YEAR_MIN, _YEAR_MAX = 1900, 2100
_DOT_THOUSANDS = re.compile(r"\d{1,3}\.\d{3}")
# A bare figure whose unit letter has two readings: "1.6k" (thousand, or km) and "28m"
# (minutes, or metres). `resolve` picks the reading the figure's family uses.
AMBIGUOUS = {"k": ("money", "distance"), "m": ("duration", "distance")}
_ORDINALS = frozenset({"st", "nd", "rd", "th"})
_NOT_COUNTED = frozenset(
    "and the for with from into onto over under about after before this that then than "
    "was were are had has have per each times in on at of to or but so a an my our".split()
)
_RATING_SCALES = frozenset({5.0, 10.0, 100.0})


def to_number(raw: str) -> float | None:
    """A written number with either separator convention: "1,234.50", "1.234,50",
    "45,10" (decimal comma), "2,100" (thousands), "12'000", "1 234" is two numbers."""
    s = raw.replace("'", "").replace("\u202f", "")
    if "," in s and "." in s:
        dec = "," if s.rfind(",") > s.rfind(".") else "."
        s = s.replace("." if dec == "," else ",", "").replace(dec, ".")
    elif "," in s:
        groups = s.split(",")
        thousands = all(len(g) == 3 for g in groups[1:]) and 1 <= len(groups[0]) <= 3
        s = s.replace(",", "") if thousands else s.replace(",", ".", 1).replace(",", "")
    elif s.count(".") > 1:
        s = s.replace(".", "")
    try:
        return float(s)
    except ValueError:
        return None


def _currency(pre: str | None, post: str | None, unit: str) -> str | None:
    for c in (pre, post):
        if c:
            return CURRENCY_SYMBOLS.get(c, c.upper())
    if unit.upper() in CURRENCY_CODES:
        return unit.upper()
    return _CURRENCY_WORDS.get(unit.lower())


def _unit(unit: str, after_duration: bool) -> tuple[str, float] | None:
    u = unit.lower().replace(" ", "")
    if u.startswith("beat"):
        return UNITS["bpm"]
    if u == _AMBIGUOUS_M:
        return UNITS["min"] if after_duration else ("distance", 1.0)
    if u in UNITS:
        return UNITS[u]
    if u.endswith(".") and u[:-1] in UNITS:
        return UNITS[u[:-1]]
    return None


def _count_noun(word: str) -> str:
    """A counted noun's singular, crudely: counts of "coffees" and "coffee" compare."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _is_date_slash(a: float, b: float) -> bool:
    return a.is_integer() and b.is_integer() and 1 <= a <= 31 and 1 <= b <= 31


_CORE_GROUPS = ("num", "clock", "slash", "hm", "hi", "per", "rate")


def _shown(m: re.Match[str], text: str) -> str:
    """The match as stated, with its unit only when it is one ("$15.00", "45 min")."""
    start = m.start("pre") if m.group("pre") else m.start("num")
    end = max(m.end(g) for g in _CORE_GROUPS if m.group(g))
    unit = (m.group("unit") or "").lower()
    if unit and (unit in UNIT_WORDS or unit.upper() in CURRENCY_CODES or unit in _CURRENCY_WORDS):
        end = m.end("unit")
    if m.group("post"):
        end = m.end("post")
    return text[start:end]


def _from_match(m: re.Match[str], text: str, last: Quantity | None) -> list[Quantity]:
    """The quantities one scanner match states (none, one, or two for a reading)."""
    num, unit = m.group("num"), m.group("unit") or ""
    raw = _shown(m, text)
    value = to_number(num)
    if value is None:
        return []
    end = m.end("hi") if m.group("hi") else m.end("num")
    if (
        not m.group("slash")
        and text[end : end + 1] in {"-", "/"}
        and text[end + 1 : end + 2].isdigit()
    ):
        return []  # a date or an id: 2024-03-01, 555-123-4567
    if m.group("per"):
        return _pace(m, value)
    if m.group("rate"):
        return _rate(m, value, raw)
    if m.group("clock"):
        return _clock(m, text, value, unit, raw)
    if m.group("slash"):
        return _slash(value, m.group("slash")[1:], unit, raw)
    if m.group("hm"):
        minutes = int(m.group("hm")[1:].strip())
        return [Quantity("duration", value * 3600 + minutes * 60, raw)]
    hi = to_number(m.group("hi")) if m.group("hi") else None
    if hi is not None and not value <= hi <= 4 * max(value, 1.0):
        return []  # "10-3", "555-1234": a score or an id, not a range
    mid = (value + hi) / 2 if hi is not None else value
    return _with_unit(m, text, mid, unit, raw, last)


def _clock(m: re.Match[str], text: str, value: float, unit: str, raw: str) -> list[Quantity]:
    parts = [int(value)] + [int(p) for p in m.group("clock")[1:].split(":")]
    ul = unit.lower()
    before = text[max(0, m.start("num") - 12) : m.start("num")]
    if ul in {"am", "pm"} or (len(parts) == 2 and _TIME_PREFIX.search(before)):
        hour = parts[0] % 12 + (12 if ul == "pm" else 0) if ul in {"am", "pm"} else parts[0]
        return [Quantity("time_of_day", hour * 60.0 + parts[1], raw)]
    if len(parts) == 3:
        return [Quantity("duration", parts[0] * 3600.0 + parts[1] * 60 + parts[2], raw)]
    if ul in {"h", "hr", "hrs", "hour", "hours"}:  # "1:20 hours": hours and minutes
        return [Quantity("duration", parts[0] * 3600.0 + parts[1] * 60, raw)]
    if ul.startswith("/"):
        return []
    return [Quantity("duration", parts[0] * 60.0 + parts[1], raw)]  # "45:10": min and s


def _rate(m: re.Match[str], value: float, raw: str) -> list[Quantity]:
    """A price per unit ("$2.544 per L", "¥214/L", "£45 an hour"), per the unit's base."""
    cur = _currency(m.group("pre"), m.group("post"), "")
    found = _unit(m.group("per_unit"), False)
    if cur is None or found is None:
        return []  # "10 per hour" of something unnamed: no comparable figure
    kind, mult = found
    return [Quantity(f"price:{cur}/{kind}", value / mult, raw)]


def _pace(m: re.Match[str], value: float) -> list[Quantity]:
    """Seconds per kilometre: "5:30/km", "8:45 min/mi"."""
    parts = [int(value)] + [int(p) for p in (m.group("clock") or "")[1:].split(":") if p]
    secs = parts[0] * 60.0 + (parts[1] if len(parts) > 1 else 0)
    per_mile = "mi" in m.group("per").lower()
    return [Quantity("pace", secs / 1.609344 if per_mile else secs, m.group(0).strip())]


def _slash(value: float, other: str, unit: str, raw: str) -> list[Quantity]:
    second = to_number(other)
    if second is None:
        return []
    if second in _RATING_SCALES and value <= second:
        return [Quantity(f"score:{second:g}", value, raw)]
    if _is_date_slash(value, second) and unit.lower() not in UNITS:
        return []  # 12/05: a date
    return [Quantity("reading:0", value, raw), Quantity("reading:1", second, raw)]


def _with_unit(
    m: re.Match[str], text: str, value: float, unit: str, raw: str, last: Quantity | None
) -> list[Quantity]:
    ul = unit.lower()
    cur = _currency(m.group("pre"), m.group("post"), unit)
    if cur is not None:
        after = _RATE_AFTER.match(text, m.end())
        found = _unit(after.group("per_unit"), False) if after else None
        if found is not None:  # "2,10 €/l": the sign came after the amount
            return [Quantity(f"price:{cur}/{found[0]}", value / found[1], raw)]
        mult = 1000.0 if ul == "k" else 1.0
        if _DOT_THOUSANDS.fullmatch(m.group("num")):
            value *= 1000  # "1.028 kr": amounts have cents, not thousandths
        return [Quantity(f"money:{cur}", value * mult, raw)]
    if ul in _ORDINALS:
        return []
    if ul in {"am", "pm"} or ul == "o'clock":
        hour = value % 12 + (12 if ul == "pm" else 0)
        return [Quantity("time_of_day", hour * 60.0, raw)]
    if ul in _FAHRENHEIT:
        return [Quantity("temperature", (value - 32) * 5 / 9, raw)]
    after_duration = last is not None and last.key == "duration"
    attached = m.group("unit") is not None and m.start("unit") == m.end("num")
    if ul in AMBIGUOUS and attached and not after_duration:
        return [Quantity(f"number:{ul}", value, raw)]
    found = _unit(ul, after_duration) if ul else None
    if found is not None:
        kind, mult = found
        return [Quantity(kind, value * mult, raw)]
    if _YEAR_MIN <= value <= _YEAR_MAX and num_is_plain(m.group("num")):
        return []  # a year
    # "3 coffees" counts coffees; "60.3 hum" counts nothing (counts are whole).
    countable = ul.isalpha() and len(ul) > 2 and ul not in _NOT_COUNTED and value.is_integer()
    key = f"count:{_count_noun(ul)}" if countable else "number"
    shown = f"{raw} {unit}" if countable else raw
    return [Quantity(key, value, shown)]


def num_is_plain(num: str) -> bool:
    return num.isdigit()


def _fraction(words: str) -> float | None:
    """The fraction a phrase names ("three-quarters of an", "and a half"), else None."""
    found = re.search(_FRACTION, words, re.IGNORECASE)
    if found is None:
        return None
    name = re.sub(r"[\s-]+", " ", found.group(0).lower()).rstrip("s")
    return _FRACTIONS.get(name)


def _word_quantities(text: str) -> Iterator[tuple[int, Quantity]]:
    """Quantities written with number words ("two hours", "an hour and a half")."""
    for m in _WORD_NUM.finditer(text):
        w = m.group("w").lower()
        if w in {"a", "an"} and m.group("unit").lower().startswith(("day", "week")):
            continue  # "twice a week", "a day ago": a frequency or a date, not an amount
        whole = _fraction(w)
        n = whole if whole is not None else 2.0 if "couple" in w else word_value(w) or 1.0
        n += _fraction(m.group("half") or m.group("half2") or "") or 0.0
        found = _unit(m.group("unit"), False)
        if found is not None:
            yield m.start(), Quantity(found[0], n * found[1], m.group(0))
    spans = [m.span() for m in _WORD_NUM.finditer(text)]
    for m in _WORD_COUNT.finditer(text):  # "six pages"
        if any(s <= m.start() < e for s, e in spans):
            continue  # "three quarters" of "three quarters of an hour"
        noun = m.group("noun").lower()
        count = word_value(m.group("w"))
        if noun not in UNITS and count is not None and count > 1:
            yield m.start(), Quantity(f"count:{_count_noun(noun)}", count, m.group(0))


def _merge_compound(qs: list[tuple[int, int, Quantity]], text: str) -> list[Quantity]:
    """ "1 hour 20 minutes", "1 hr and 20 min", "5 ft 10 in": one quantity."""
    out: list[Quantity] = []
    prev_end = -1
    for start, end, q in qs:
        if out and q.key == out[-1].key == "duration" and q.value < out[-1].value:
            gap = text[prev_end:start].strip(" ,").lower()
            if gap in {"", "and"}:
                last = out[-1]
                out[-1] = Quantity("duration", last.value + q.value, text_between(last, q))
                prev_end = end
                continue
        out.append(q)
        prev_end = end
    return out


def text_between(a: Quantity, b: Quantity) -> str:
    return f"{a.text} {b.text}"


def parse_quantities(text: str) -> list[Quantity]:
    """The comparable quantities a text states, in order."""
    found: list[tuple[int, int, Quantity]] = []
    last: Quantity | None = None
    for m in _SCAN.finditer(text):
        for q in _from_match(m, text, last):
            found.append((m.start(), m.end(), q))
            last = q
    taken = [(s, e) for s, e, _ in found]
    for start, q in _word_quantities(text):
        if not any(s <= start < e for s, e in taken):
            found.append((start, start + len(q.text), q))
    found.sort(key=lambda t: t[0])
    return _merge_compound(found, text)


_SEXAGESIMAL = re.compile(r"\d+(?::\d{2}){1,2}|\d+h\s?\d{1,2}", re.IGNORECASE)
_FIRST_NUMBER = re.compile(r"\d+(?:[.,'\u202f]\d+)*")


def relative_step(text: str) -> float | None:
    """The resolution a figure is written in, relative to it: "5 min" -> 0.2, "7.5 h" ->
    0.013, "$15.00" -> 0.0007, "1:01" or "1h02" -> 1/61 (one of its last unit). None when
    its last group has three digits ("1,028", "1.028"): thousands or thousandths, no
    resolution to read."""
    sexagesimal = _SEXAGESIMAL.search(text)
    if sexagesimal:
        parts = [int(p) for p in re.split(r"[:h]\s?", sexagesimal.group(0).lower())]
        total = 0
        for p in parts:
            total = total * 60 + p
        return 1.0 / total if total else None
    m = _FIRST_NUMBER.search(text)
    if not m:
        return None
    num = m.group(0)
    last = max(num.rfind("."), num.rfind(","))
    decimals = len(num) - last - 1 if last >= 0 else 0
    value = to_number(num)
    if decimals == 3 or not value:
        return None
    return 10.0**-decimals / value
