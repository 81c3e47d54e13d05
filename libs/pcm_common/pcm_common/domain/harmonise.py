"""Ambiguous forms read as a memory's family states them (`harmonise`).

A text alone cannot say whether "$" is US or Australian dollars, "1:03" an hour or a minute,
"at 3:15" morning or afternoon, "66 degrees" Celsius or Fahrenheit. Its family can: the
reading nearer what the same routine states elsewhere is taken. Pure functions."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence

from pcm_common.domain.quantities import Quantity

# Signs several currencies write alike: read as the one currency of the group that the
# same texts name by code ("$553.64" among "163.87 AUD" entries is Australian dollars).
_SHARED_SIGNS: dict[str, frozenset[str]] = {
    "USD": frozenset("USD AUD CAD NZD SGD HKD MXN".split()),  # "$", "dollars", "bucks"
    "KR": frozenset("SEK NOK DKK".split()),
    "JPY": frozenset("JPY CNY".split()),  # "¥"
}
_BARE_CLOCK = re.compile(r"\d{1,2}:\d{2}")
# A time of day on a twelve-hour dial with no am/pm ("at 3:15"; "03:15" is a 24-hour one).
_TWELVE_HOUR = re.compile(r"(?:[1-9]|1[01]):\d{2}")
_BARE_DEGREES = re.compile(r"(?:degrees?|°)$", re.IGNORECASE)
_DAY = 1440.0  # minutes


def harmonise(texts: Sequence[Sequence[Quantity]]) -> list[list[Quantity]]:
    """The quantities of a memory and its family read alike where a form is ambiguous:
    - a currency sign shared by several currencies takes the code the texts use for its
      group (when they use exactly one);
    - a bare clock ("1:03") is minutes and seconds or hours and minutes, whichever is
      nearer the texts' other durations, or a time of day when they state times of day
      and no durations;
    - a twelve-hour time with no am/pm takes the half of the day nearer the other times;
    - bare "degrees" are Celsius or Fahrenheit, whichever is nearer the stated ones."""
    flat = [q for qs in texts for q in qs]
    coded = _coded_signs(flat)
    durations = [q.value for q in flat if q.key == "duration" and not _BARE_CLOCK.fullmatch(q.text)]
    duration_ref = statistics.median(durations) if durations else None
    clocks = [q.value for q in flat if q.kind == "time_of_day" and not _twelve_hour(q)]
    clocks = clocks or [q.value for q in flat if q.kind == "time_of_day"]
    temps = [q.value for q in flat if q.kind == "temperature" and not _bare_degrees(q)]
    temp_ref = statistics.median(temps) if temps else None
    return [[_read(q, coded, duration_ref, clocks, temp_ref) for q in qs] for qs in texts]


def _read(
    q: Quantity,
    coded: dict[str, set[str]],
    duration_ref: float | None,
    clocks: Sequence[float],
    temp_ref: float | None,
) -> Quantity:
    code = _code(q)
    if _signed(q, code):
        codes = coded.get(code, set())
        return q._replace(key=f"money:{next(iter(codes))}") if len(codes) == 1 else q
    if q.key == "duration" and _BARE_CLOCK.fullmatch(q.text):
        if duration_ref:
            longer = q.value * 60.0  # hours and minutes
            if abs(math.log(longer / duration_ref)) < abs(
                math.log(max(q.value, 1.0) / duration_ref)
            ):
                return q._replace(value=longer)
            return q
        if clocks:  # "15:20" among pickups at "3:17pm": a time, not 15 min 20 s
            return _read(q._replace(key="time_of_day", value=q.value), coded, None, clocks, None)
        return q
    if q.kind == "time_of_day" and _twelve_hour(q) and clocks:
        later = (q.value + _DAY / 2) % _DAY
        if _clock_distance(later, clocks) < _clock_distance(q.value, clocks):
            return q._replace(value=later)
        return q
    if _bare_degrees(q) and temp_ref is not None:
        celsius_if_f = (q.value - 32) * 5 / 9
        if abs(celsius_if_f - temp_ref) < abs(q.value - temp_ref):
            return q._replace(value=celsius_if_f)
    return q


def _coded_signs(flat: Sequence[Quantity]) -> dict[str, set[str]]:
    coded: dict[str, set[str]] = {}
    for q in flat:
        code = _code(q)
        if code and not _signed(q, code):
            for sign, group in _SHARED_SIGNS.items():
                if code in group:
                    coded.setdefault(sign, set()).add(code)
    return coded


def _twelve_hour(q: Quantity) -> bool:
    return q.kind == "time_of_day" and bool(_TWELVE_HOUR.fullmatch(q.text.strip()))


def _bare_degrees(q: Quantity) -> bool:
    return q.kind == "temperature" and bool(_BARE_DEGREES.search(q.text.strip()))


def _clock_distance(value: float, others: Sequence[float]) -> float:
    """The median distance on the 24-hour dial from `value` to `others`."""
    gaps = [abs(value - o) % _DAY for o in others]
    return statistics.median(min(g, _DAY - g) for g in gaps)


def _code(q: Quantity) -> str:
    return q.key.split(":", 1)[1] if q.kind == "money" and ":" in q.key else ""


def _signed(q: Quantity, code: str) -> bool:
    """Written with a sign its currency shares with others ("$", "kr", "¥"), not a code."""
    return code in _SHARED_SIGNS and (code == "KR" or code not in q.text.upper())
