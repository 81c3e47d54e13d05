"""Values that know how to write themselves the way people type them.

Every class here implements ``__format__`` so a phrasing template can ask for a style with an
ordinary format spec, for example ``{amount:code}`` or ``{dur:hyph}``. The spec names are listed
on each class. An empty spec always gives the most common written form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    """Spell out 0-99 in English words; larger numbers stay as digits."""
    if n < 20:
        return _SMALL[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + ("" if ones == 0 else "-" + _SMALL[ones])
    return str(n)


def _group(digits: str, sep: str, indian: bool) -> str:
    """Insert thousands separators into a string of digits."""
    if len(digits) <= 3:
        return digits
    if not indian:
        head = len(digits) % 3 or 3
        parts = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
        return sep.join(parts)
    last3, rest = digits[-3:], digits[:-3]
    head = len(rest) % 2 or 2
    parts = [rest[:head]] + [rest[i : i + 2] for i in range(head, len(rest), 2)]
    return sep.join([*parts, last3])


def format_number(
    value: float,
    decimals: int,
    *,
    comma_decimal: bool = False,
    indian: bool = False,
    grouping: bool = True,
) -> str:
    """Fixed-point number with optional grouping; decimal comma for continental style."""
    text = f"{abs(value):.{decimals}f}"
    whole, _, frac = text.partition(".")
    thousands, point = (".", ",") if comma_decimal else (",", ".")
    if grouping:
        whole = _group(whole, thousands, indian)
    sign = "-" if value < 0 and float(text) != 0 else ""
    return sign + whole + (point + frac if frac else "")


@dataclass(frozen=True)
class Currency:
    """A persona's money: ISO code, symbol and how amounts are usually written."""

    code: str
    symbol: str
    rate: float  # units of this currency per US dollar, for scaling base amounts
    decimals: int = 2
    price_decimals: int = 3  # unit prices such as fuel per litre
    suffix: bool = False  # "45,10 €" instead of "€45.10"
    indian: bool = False  # 1,20,000 grouping
    nice_step: float = 1.0  # smallest round amount people quote
    level: float = 1.0  # local price level: scales base amounts other than unit prices


@dataclass(frozen=True)
class Money:
    """An amount of money.

    Specs: "" local style (£1,234.50 or 1.234,50 €), "code" (EUR 45.10), "codeafter"
    (45.10 EUR), "round" (local style, whole units), "k" (£2.1k for large sums),
    "bare" (number in local style without currency), "neg" (a debit: -£45.10 or -45,10 €),
    "approx" (about, whole units: ~£45 or ~45 €).
    """

    value: float
    currency: Currency
    decimals: int

    def _num(self, decimals: int, comma: bool) -> str:
        return format_number(self.value, decimals, comma_decimal=comma, indian=self.currency.indian)

    def _local(self, decimals: int) -> str:
        cur = self.currency
        if cur.suffix:
            return f"{self._num(decimals, True)} {cur.symbol}"
        return f"{cur.symbol}{self._num(decimals, False)}"

    def __format__(self, spec: str) -> str:
        cur = self.currency
        if spec in ("", "local"):
            return self._local(self.decimals)
        if spec == "code":
            return f"{cur.code} {self._num(self.decimals, False)}"
        if spec == "codeafter":
            return f"{self._num(self.decimals, cur.suffix)} {cur.code}"
        if spec == "round":
            return self._local(0)
        if spec == "bare":
            return self._num(self.decimals, cur.suffix)
        if spec == "neg":
            return "-" + self._local(self.decimals)
        if spec == "approx":
            return "~" + self._local(0)
        if spec == "k":
            if self.value < 1000 or (cur.decimals == 0 and not cur.indian):
                return self._local(0)
            thousands = format_number(self.value / 1000, 1, comma_decimal=cur.suffix)
            thousands = thousands.removesuffix(".0").removesuffix(",0")
            if cur.suffix:
                return f"{thousands}k {cur.symbol}"
            return f"{cur.symbol}{thousands}k"
        raise ValueError(f"unknown money spec {spec!r}")


def _hours_words(minutes: float) -> str:
    """'an hour and a half', 'about two hours' and so on, to the nearest quarter hour."""
    quarters = max(1, round(minutes / 15))
    whole, part = divmod(quarters, 4)
    exact = abs(quarters * 15 - minutes) <= 3
    about = "" if exact else "about "
    if whole == 0:
        return (
            about + ("a quarter of an hour", "half an hour", "three quarters of an hour")[part - 1]
        )
    lead = "an hour" if whole == 1 else f"{number_words(whole)} hours"
    if part == 0:
        return about + lead
    if whole == 1:
        tail = ("and a quarter", "and a half", "and three quarters")[part - 1]
        return f"{about}an hour {tail}"
    frac = ("and a quarter", "and a half", "and three-quarter")[part - 1]
    return f"{about}{number_words(whole)} {frac} hours"


@dataclass(frozen=True)
class Duration:
    """A length of time, stored in minutes.

    Specs: "" / "min" (45 min), "mins" (45 mins), "minutes" (45 minutes), "m" (45m),
    "hyph" (45-minute), "hm" (1h20, 45m), "hmin" (1 hr 20 min), "clock" (1:20),
    "hms" (1:20:05 or 44:18), "hrs" (7.5 hrs), "hours" (7.5 hours), "h" (7.5h),
    "range" (7-8 hours), "words" (an hour and a half, forty minutes), "hsp" (1h 20m, 45m),
    "hlong" (1 hour 20 minutes), "tilde" (~45 min).
    """

    minutes: float

    def _whole(self) -> int:
        return max(0, round(self.minutes))

    def _hours_num(self) -> str:
        hours = self.minutes / 60
        text = f"{hours:.1f}"
        return text[:-2] if text.endswith(".0") else text

    def __format__(self, spec: str) -> str:
        whole = self._whole()
        h, m = divmod(whole, 60)
        if spec in ("", "min"):
            return f"{whole} min"
        if spec == "mins":
            return f"{whole} mins"
        if spec == "minutes":
            return f"{whole} minute" if whole == 1 else f"{whole} minutes"
        if spec == "m":
            return f"{whole}m"
        if spec == "hyph":
            return f"{whole}-minute"
        if spec == "hm":
            if h == 0:
                return f"{m}m"
            return f"{h}h" if m == 0 else f"{h}h{m:02d}"
        if spec == "hmin":
            if h == 0:
                return f"{m} min"
            head = f"{h} hr" if h == 1 else f"{h} hrs"
            return head if m == 0 else f"{head} {m} min"
        if spec == "clock":
            return f"{h}:{m:02d}"
        if spec == "hms":
            seconds = max(0, round(self.minutes * 60))
            hh, rest = divmod(seconds, 3600)
            mm, ss = divmod(rest, 60)
            return f"{hh}:{mm:02d}:{ss:02d}" if hh else f"{mm}:{ss:02d}"
        if spec == "hrs":
            return f"{self._hours_num()} hrs"
        if spec == "hours":
            num = self._hours_num()
            return f"{num} hour" if num == "1" else f"{num} hours"
        if spec == "h":
            return f"{self._hours_num()}h"
        if spec == "range":
            low = math.floor(self.minutes / 60)
            return f"{low}-{low + 1} hours"
        if spec == "hsp":
            if h == 0:
                return f"{m}m"
            return f"{h}h" if m == 0 else f"{h}h {m}m"
        if spec == "hlong":
            mins = f"{m} minute" if m == 1 else f"{m} minutes"
            if h == 0:
                return mins
            hours = "1 hour" if h == 1 else f"{h} hours"
            return hours if m == 0 else f"{hours} {mins}"
        if spec == "tilde":
            return f"~{whole} min"
        if spec == "words":
            if whole < 40:
                return f"{number_words(whole)} minutes"
            return _hours_words(self.minutes)
        raise ValueError(f"unknown duration spec {spec!r}")


@dataclass(frozen=True)
class Unit:
    """How one unit system writes a measure."""

    short: str
    long: str
    factor: float = 1.0
    offset: float = 0.0
    decimals: int = 1
    space: bool = True
    trim: bool = False  # drop a trailing ".0" (92.5 kg but 90 kg)


@dataclass(frozen=True)
class Measure:
    """A number with a unit, already converted to the persona's unit system.

    Specs: "" (5.2 km), "u" (5.2km), "n" (5.2), "h" (5.2-km), "long" (5.2 kilometres),
    "unit" (km), "alt" (the alternative unit, e.g. 2100 ml), "round" (no decimals, 5 km),
    "approx" (~5.2 km).
    """

    value: float  # in the base (metric) unit
    unit: Unit
    alt: Unit | None = None

    def _shown(self, unit: Unit) -> float:
        return self.value * unit.factor + unit.offset

    def _num(self, unit: Unit, decimals: int | None = None) -> str:
        places = unit.decimals if decimals is None else decimals
        text = format_number(self._shown(unit), places, grouping=places == 0)
        return text.removesuffix(".0") if unit.trim else text

    def __format__(self, spec: str) -> str:
        unit = self.unit
        if spec == "":
            sep = " " if unit.space else ""
            return f"{self._num(unit)}{sep}{unit.short}"
        if spec == "u":
            return f"{self._num(unit)}{unit.short}"
        if spec == "n":
            return self._num(unit)
        if spec == "h":
            return f"{self._num(unit)}-{unit.short}"
        if spec == "long":
            return f"{self._num(unit)} {unit.long}"
        if spec == "unit":
            return unit.short
        if spec == "round":
            sep = " " if unit.space else ""
            return f"{self._num(unit, 0)}{sep}{unit.short}"
        if spec == "approx":
            sep = " " if unit.space else ""
            return f"~{self._num(unit)}{sep}{unit.short}"
        if spec == "alt":
            other = self.alt or unit
            sep = " " if other.space else ""
            return f"{self._num(other)}{sep}{other.short}"
        raise ValueError(f"unknown measure spec {spec!r}")


@dataclass(frozen=True)
class Count:
    """A whole number of things. Specs: "" (4 pages), "n" (4), "w" (four pages)."""

    n: int
    singular: str
    plural: str

    def _noun(self) -> str:
        return self.singular if self.n == 1 else self.plural

    def __format__(self, spec: str) -> str:
        if spec == "":
            return f"{self.n} {self._noun()}"
        if spec == "n":
            return str(self.n)
        if spec == "w":
            return f"{number_words(self.n)} {self._noun()}"
        raise ValueError(f"unknown count spec {spec!r}")


@dataclass(frozen=True)
class Reading:
    """A two-part reading such as blood pressure.

    Specs: "" (128/82), "mm" (128/82 mmHg), "over" (128 over 82), "sys" (128), "dia" (82),
    "sp" (128 / 82).
    """

    high: int
    low: int

    def __format__(self, spec: str) -> str:
        if spec == "":
            return f"{self.high}/{self.low}"
        if spec == "mm":
            return f"{self.high}/{self.low} mmHg"
        if spec == "over":
            return f"{self.high} over {self.low}"
        if spec == "sys":
            return str(self.high)
        if spec == "dia":
            return str(self.low)
        if spec == "sp":
            return f"{self.high} / {self.low}"
        raise ValueError(f"unknown reading spec {spec!r}")


@dataclass(frozen=True)
class Clock:
    """A time of day in minutes after midnight.

    Specs: "" (3:25), "pm" (3:25pm), "24" (15:25), "dot" (3.25pm), "hhmm" (1525),
    "fr" (15h25), "ampm" (3:25 p.m.).
    """

    minute_of_day: int

    def _parts(self) -> tuple[int, int]:
        return divmod(self.minute_of_day % (24 * 60), 60)

    def _twelve(self) -> tuple[int, int, str]:
        h, m = self._parts()
        suffix = "am" if h < 12 else "pm"
        return (h % 12) or 12, m, suffix

    def __format__(self, spec: str) -> str:
        h, m = self._parts()
        if spec == "":
            return f"{self._twelve()[0]}:{m:02d}"
        if spec == "pm":
            hh, mm, suffix = self._twelve()
            return f"{hh}:{mm:02d}{suffix}"
        if spec == "24":
            return f"{h:02d}:{m:02d}"
        if spec == "dot":
            hh, mm, suffix = self._twelve()
            return f"{hh}.{mm:02d}{suffix}"
        if spec == "hhmm":
            return f"{h:02d}{m:02d}"
        if spec == "fr":
            return f"{h}h{m:02d}"
        if spec == "ampm":
            hh, mm, suffix = self._twelve()
            return f"{hh}:{mm:02d} {suffix[0]}.{suffix[1]}."
        raise ValueError(f"unknown clock spec {spec!r}")


@dataclass(frozen=True)
class Version:
    """A release version. Specs: "" (v2.14.3), "n" (2.14.3)."""

    major: int
    minor: int
    patch: int

    def __format__(self, spec: str) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        if spec == "":
            return "v" + core
        if spec == "n":
            return core
        raise ValueError(f"unknown version spec {spec!r}")


@dataclass(frozen=True)
class Serial:
    """A running document number. Specs: "" (INV-0142), "n" (142), "hash" (#142)."""

    prefix: str
    n: int

    def __format__(self, spec: str) -> str:
        if spec == "":
            return f"{self.prefix}-{self.n:04d}"
        if spec == "n":
            return str(self.n)
        if spec == "hash":
            return f"#{self.n}"
        raise ValueError(f"unknown serial spec {spec!r}")


@dataclass(frozen=True)
class Text:
    """A slot value such as a place or a person. Specs: "" as stored, "cap" capitalised."""

    value: str

    def __format__(self, spec: str) -> str:
        if spec == "":
            return self.value
        if spec == "cap":
            return self.value[:1].upper() + self.value[1:]
        raise ValueError(f"unknown text spec {spec!r}")
