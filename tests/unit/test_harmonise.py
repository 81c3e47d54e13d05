"""Ambiguous forms read as the family states them (`domain.harmonise`), and the forms
`parse_quantities` keeps apart (prices per unit, number words, US units)."""

from __future__ import annotations

import pytest

from pcm_common.domain.harmonise import harmonise
from pcm_common.domain.quantities import parse_quantities, relative_step


def _read(texts: list[str]) -> list[list[tuple[str, float]]]:
    return [
        [(q.key, round(q.value, 1)) for q in qs]
        for qs in harmonise([parse_quantities(t) for t in texts])
    ]


def test_a_twelve_hour_time_takes_the_half_of_the_day_the_routine_keeps() -> None:
    got = _read(["Picked the kids up at 3:15.", "school run, 3:27pm", "collected at 15:13"])
    assert got[0] == [("time_of_day", 915.0)]
    # ...and a morning routine keeps the morning.
    assert _read(["woke at 6:45", "up at 6:50am", "alarm 06:40"])[0] == [("time_of_day", 405.0)]


def test_a_bare_clock_among_times_of_day_is_a_time() -> None:
    got = _read(["pickup 15:20", "collected at 3:17pm", "pickup at 3:25 pm"])
    assert got[0] == [("time_of_day", 920.0)]


def test_bare_degrees_take_the_scale_the_family_states() -> None:
    fahrenheit = _read(["loft: 66.6 degrees", "loft 66.9°F", "loft 67.6°F"])
    assert fahrenheit[0] == [("temperature", 19.2)]
    celsius = _read(["room 21.5 degrees", "room 20.9°C", "room 21.2°C"])
    assert celsius[0] == [("temperature", 21.5)]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("44.6 litres at $2.544 per L", "price:USD/volume", 2.544),
        ("50.8 L at ¥214/L", "price:JPY/volume", 214.0),
        ("2,10 €/l at the pump", "price:EUR/volume", 2.1),
        ("26.7 hrs at £45 an hour", "price:GBP/duration", 45 / 3600),
        ("EUR 0.31/kWh this quarter", "price:EUR/electricity", 0.31),
    ],
)
def test_a_price_per_unit_is_no_amount_paid(text: str, key: str, value: float) -> None:
    prices = [q for q in parse_quantities(text) if q.kind == "price"]
    assert [(q.key, round(q.value, 6)) for q in prices] == [(key, round(value, 6))]
    assert not any(q.kind == "money" for q in parse_quantities(text))


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("12.3 gallons in the tank", "volume", 46.56),
        ("Drank 64 oz of water", "volume", 1.89),
        ("deploy took eighteen minutes", "duration", 1080.0),
        ("twenty-five minutes on the bike", "duration", 1500.0),
        ("gym for an hour and a quarter", "duration", 4500.0),
        ("seventeen pages overnight", "count:page", 17.0),
    ],
)
def test_units_and_number_words(text: str, key: str, value: float) -> None:
    (q,) = parse_quantities(text)
    assert (q.key, round(q.value, 2)) == (key, value)


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("1:01", 1 / 61),
        ("1h02", 1 / 62),
        ("0:50", 1 / 50),
        ("1:20:05", 1 / 4805),
        ("7.5 h", 1 / 75),
    ],
)
def test_a_clock_figure_is_written_to_its_last_unit(text: str, step: float) -> None:
    # "1:01" is written to the minute (or second), not to the hour: read as the hour, a
    # gym log in h:mm had a spread floor of half its value, and 2h45 among 1h-ish
    # sessions was no outlier.
    assert relative_step(text) == pytest.approx(step)
