"""Quantities as people write them (pcm_common.domain.quantities): pure, table-driven."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.bare_figures import resolve
from pcm_common.domain.quantities import parse_quantities, relative_step, to_number

H, MIN, KM = 3600.0, 60.0, 1000.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # currencies: symbols and codes, before or after, either separator convention
        ("Paid $1,350.00 for it", [("money:USD", 1350.0)]),
        ("Groceries 45,10 € at the market", [("money:EUR", 45.1)]),
        ("EUR 45.10 for petrol", [("money:EUR", 45.1)]),
        ("came to 45.10 EUR", [("money:EUR", 45.1)]),
        ("council tax £1.234,56", [("money:GBP", 1234.56)]),
        ("lunch ¥3000", [("money:JPY", 3000.0)]),
        ("a $2k bonus", [("money:USD", 2000.0)]),
        ("gave him 20 dollars", [("money:USD", 20.0)]),
        ("CHF 12'500 deposit", [("money:CHF", 12500.0)]),
        # ranges, readings, scores
        ("Slept 7-8 hours", [("duration", 7.5 * H)]),
        ("slept 7 to 8 hrs", [("duration", 7.5 * H)]),
        ("BP 128/82 this morning", [("reading:0", 128.0), ("reading:1", 82.0)]),
        ("blood pressure 141/95 mmHg", [("reading:0", 141.0), ("reading:1", 95.0)]),
        ("pain about 7/10", [("score:10", 7.0)]),
        # hyphenated, attached and abbreviated units
        ("a 5-km loop", [("distance", 5 * KM)]),
        ("a 45-minute swim", [("duration", 45 * MIN)]),
        ("Weighed 84kg", [("weight", 84.0)]),
        ("weight 180 lbs", [("weight", 180 * 0.45359237)]),
        ("7.5hrs of sleep", [("duration", 7.5 * H)]),
        ("took 45 mins", [("duration", 45 * MIN)]),
        ("walked 3 mi", [("distance", 3 * 1609.344)]),
        ("blood sugar 110 mg/dL", [("glucose", 110.0)]),
        ("Temp 38.5°C", [("temperature", 38.5)]),
        ("fever of 101 °F", [("temperature", pytest.approx(38.333, abs=1e-3))]),
        ("battery at 45%", [("percent", 45.0)]),
        ("down 3 percent", [("percent", 3.0)]),
        # durations in their many forms
        ("Ran 10 km in 1h20", [("distance", 10 * KM), ("duration", 80 * MIN)]),
        # a bare "k" or "m" has two readings: left to the family (`resolve`)
        ("Ran 10k", [("number:k", 10.0)]),
        ("call w/ Dad 28m", [("number:m", 28.0)]),
        ("60.3 hum 60", [("number", 60.3), ("number", 60.0)]),
        ("13.9GB of data", [("data", 13900.0)]),
        ("1.028 kr at the shop", [("money:KR", 1028.0)]),
        ("resting 56 beats a minute", [("heart_rate", 56.0)]),
        ("six pages this week", [("count:page", 6.0)]),
        ("ride took 1:20:05", [("duration", 4805.0)]),
        ("swim 45:10", [("duration", 45 * MIN + 10)]),
        ("1 hr 20 mins on the phone", [("duration", 80 * MIN)]),
        ("2 hours and 15 minutes", [("duration", 135 * MIN)]),
        ("an hour and a half", [("duration", 1.5 * H)]),
        ("half an hour", [("duration", 0.5 * H)]),
        ("two hours", [("duration", 2 * H)]),
        ("pace 5:30/km", [("pace", 330.0)]),
        # times of day
        ("at 19:30", [("time_of_day", 19 * 60 + 30.0)]),
        ("woke at 6:45am", [("time_of_day", 6 * 60 + 45.0)]),
        ("bed by 11pm", [("time_of_day", 23 * 60.0)]),
        # counts
        ("12,000 steps", [("count:step", 12000.0)]),
        ("3 coffees today", [("count:coffee", 3.0)]),
        ("4 glasses of water", [("count:glass", 4.0)]),
        # when, not how much
        ("On 2024-03-01 in 2023 for the 3rd time", []),
        ("appointment on 12/05", []),
        ("twice a week", []),
    ],
)
def test_quantity_forms(text: str, expected: list[tuple[str, float]]) -> None:
    assert [(q.key, q.value) for q in parse_quantities(text)] == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("90 min", "1.5 hours"),
        ("1h30", "90 mins"),
        ("1:30:00", "an hour and a half"),
        ("5 km", "5000 metres"),
        ("5-km", "5 km"),
        ("$2,100.00", "USD 2100"),
        ("2.100,00 €", "EUR 2,100"),
    ],
)
def test_equal_amounts_in_other_forms_compare_equal(a: str, b: str) -> None:
    (qa,) = parse_quantities(f"took {a}")
    (qb,) = parse_quantities(f"took {b}")
    assert (qa.key, qa.value) == (qb.key, pytest.approx(qb.value))


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=99))
def test_separators_either_way(whole: int, cents: int) -> None:
    us = f"{whole:,}.{cents:02d}"
    eu = us.replace(",", " ").replace(".", ",").replace(" ", ".")
    assert to_number(us) == to_number(eu) == pytest.approx(whole + cents / 100)


@given(st.text(alphabet="0123456789 .,:/-$€£kmhrsin%", max_size=200))
def test_any_text_parses_without_error(text: str) -> None:
    for q in parse_quantities(text):
        assert q.value == q.value  # not NaN


def test_linear_time_on_long_inputs() -> None:
    unit = "Ran 5-km in 27:40, paid $1,350.00, slept 7-8 hrs, BP 128/82. " * 50
    t0 = time.perf_counter()
    parse_quantities(unit)
    short = time.perf_counter() - t0
    t0 = time.perf_counter()
    parse_quantities(unit * 20)
    long = time.perf_counter() - t0
    assert long < 60 * max(short, 1e-4)  # 20x the text, far from quadratic
    assert parse_quantities("1" * 5000 + "x" * 5000) is not None


@pytest.mark.parametrize(
    ("text", "usual", "expected"),
    [
        ("mobile 21.45 (Nimbus)", {"money:GBP"}, [("money:GBP", 21.45)]),
        ("rent 1.6k to Parkside", {"money:EUR"}, [("money:EUR", 1600.0)]),
        ("Ran 10k", {"distance", "duration"}, [("distance", 10 * KM)]),
        ("call w/ Dad 28m", {"duration"}, [("duration", 28 * MIN)]),
        ("RHR 57", {"heart_rate"}, [("heart_rate", 57.0)]),
        # two bare numbers pair with nothing; a text naming its currency keeps it
        ("temp 60.3 hum 60", {"temperature"}, [("number", 60.3), ("number", 60.0)]),
        ("paid $21.45", {"money:GBP"}, [("money:USD", 21.45)]),
    ],
)
def test_bare_figures_read_as_the_family_states_them(
    text: str, usual: set[str], expected: list[tuple[str, float]]
) -> None:
    assert [(q.key, q.value) for q in resolve(parse_quantities(text), usual)] == expected


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("5 min", 0.2),
        ("7.5 h", 0.1 / 7.5),
        ("$15.00", 0.01 / 15),
        ("2,100", None),
        ("1.028 kr", None),
    ],
)
def test_relative_step(text: str, step: float | None) -> None:
    assert relative_step(text) == (pytest.approx(step) if step is not None else None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sat with the twins for three quarters of an hour.", [("duration", 45 * MIN)]),
        ("a quarter of an hour on the phone", [("duration", 15 * MIN)]),
        ("a half hour stroll", [("duration", 30 * MIN)]),
        ("slept six and three-quarter hours", [("duration", 6.75 * 3600)]),
        ("an hour and three quarters of practice", [("duration", 105 * MIN)]),
        ("walked a third of a mile", [("distance", 1609.344 / 3)]),
        ("two and a half hours of marking", [("duration", 150 * MIN)]),
    ],
)
def test_fractions_in_words(text: str, expected: list[tuple[str, float]]) -> None:
    got = [(q.key, q.value) for q in parse_quantities(text)]
    assert [k for k, _ in got] == [k for k, _ in expected]
    assert [v for _, v in got] == pytest.approx([v for _, v in expected])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # fields of a terse log separated by slashes
        ("swim/Lido/42m", [("number:m", 42.0)]),
        ("water/Aquafirm/1,240/paid", [("number", 1240.0)]),
        ("bp/am/131/84", [("reading:0", 131.0), ("reading:1", 84.0)]),
        # a date's and a path's parts are no figures
        ("08/11/2025 class done", []),
        ("API /v3/27 was slow", []),
    ],
)
def test_figures_in_slash_separated_fields(text: str, expected: list[tuple[str, float]]) -> None:
    assert [(q.key, q.value) for q in parse_quantities(text)] == expected


def test_a_bare_four_digit_figure_among_times_of_day_is_a_clock() -> None:
    clock = resolve(parse_quantities("lights out 2215"), {"time_of_day"})
    assert [(q.key, q.value) for q in clock] == [("time_of_day", 22 * 60 + 15.0)]
    # not a clock: stays a bare number
    other = resolve(parse_quantities("lights out 2290"), {"time_of_day"})
    assert [q.key for q in other] == ["number"]


def test_a_bare_figure_takes_the_family_kind_only_near_its_values() -> None:
    typical = {"money:EUR": 900.0, "glucose": 100.0}
    near = resolve(parse_quantities("rent/Calloway/1,450/paid"), {"money:EUR"}, typical)
    assert [q.key for q in near] == ["money:EUR"]
    far = resolve(parse_quantities("sugar 5.4 before breakfast"), {"glucose"}, typical)
    assert [q.key for q in far] == ["number"]
