"""Quantity extraction compared: `pcm_common.domain.quantities` against quantulum3 and
price-parser on a corpus of quantity phrases (precision, recall, time per phrase).

The libraries are not project dependencies: run this in an environment that has them,
with the project's library on the path (it needs only the standard library):

    uv venv /tmp/qlib && VIRTUAL_ENV=/tmp/qlib uv pip install quantulum3 price-parser
    PYTHONPATH=libs/pcm_common:. /tmp/qlib/bin/python -m bench.quantity_libs

A found quantity counts as right when its kind matches and its value, in the kind's base
unit, is within 1% of the expected one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pcm_common.domain.bare_figures import resolve
from pcm_common.domain.quantities import parse_quantities

H, MIN, KM = 3600.0, 60.0, 1000.0
Gold = list[tuple[str, float]]
# (phrase, [(kind, value in base unit)]): kinds as the project names them, currency apart.
CORPUS: list[tuple[str, Gold]] = [
    ("Paid $1,350.00 for it", [("money", 1350.0)]),
    ("Groceries 45,10 € at the market", [("money", 45.1)]),
    ("EUR 45.10 for petrol", [("money", 45.1)]),
    ("came to 45.10 EUR", [("money", 45.1)]),
    ("council tax £1.234,56", [("money", 1234.56)]),
    ("lunch ¥3000", [("money", 3000.0)]),
    ("a $2k bonus", [("money", 2000.0)]),
    ("gave him 20 dollars", [("money", 20.0)]),
    ("Water bill: £42.10, paid today", [("money", 42.1)]),
    ("Rent transferred, $2,100.00.", [("money", 2100.0)]),
    ("Slept 7-8 hours", [("duration", 7.5 * H)]),
    ("slept 7 to 8 hrs", [("duration", 7.5 * H)]),
    ("BP 128/82 this morning", [("reading", 128.0), ("reading", 82.0)]),
    ("blood pressure 141/95 mmHg", [("reading", 141.0), ("reading", 95.0)]),
    ("a 5-km loop", [("distance", 5 * KM)]),
    ("a 45-minute swim", [("duration", 45 * MIN)]),
    ("Weighed 84kg", [("weight", 84.0)]),
    ("weight 180 lbs", [("weight", 180 * 0.45359237)]),
    ("7.5hrs of sleep", [("duration", 7.5 * H)]),
    ("took 45 mins", [("duration", 45 * MIN)]),
    ("walked 3 mi", [("distance", 3 * 1609.344)]),
    ("Temp 38.5°C", [("temperature", 38.5)]),
    ("battery at 45%", [("percent", 45.0)]),
    ("Ran 10k in 1h20", [("distance", 10 * KM), ("duration", 80 * MIN)]),
    ("ride took 1:20:05", [("duration", 4805.0)]),
    ("swim 45:10", [("duration", 45 * MIN + 10)]),
    ("1 hr 20 mins on the phone", [("duration", 80 * MIN)]),
    ("2 hours and 15 minutes", [("duration", 135 * MIN)]),
    ("an hour and a half", [("duration", 1.5 * H)]),
    ("two hours", [("duration", 2 * H)]),
    (
        "Ran 7.7 km on the lakeside trail today, time 44:18.",
        [("distance", 7700.0), ("duration", 2658.0)],
    ),
    ("Weekly call with Mom: 33 minutes.", [("duration", 33 * MIN)]),
    ("Scale this morning: 84.5 kg.", [("weight", 84.5)]),
    ("12,000 steps", [("count", 12000.0)]),
    ("3 coffees today", [("count", 3.0)]),
    ("On 2024-03-01 in 2023 for the 3rd time", []),
    ("appointment on 12/05", []),
    ("twice a week", []),
]

_Q3_KINDS = {
    "currency": "money",
    "time": "duration",
    "length": "distance",
    "mass": "weight",
    "temperature": "temperature",
    "dimensionless": "count",
}
# quantulum3 reports SI-ish units by name; the factor to the project's base unit.
_Q3_FACTORS = {
    "second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0,
    "metre": 1.0, "kilometre": 1000.0, "mile": 1609.344, "kilogram": 1.0,
    "pound-mass": 0.45359237, "gram": 0.001, "degree Celsius": 1.0, "percentage": 1.0,
}  # fmt: skip


def ours(text: str) -> Gold:
    out: Gold = []
    for q in resolve(parse_quantities(text), ()):  # no family: bare "k" reads as km
        kind = q.kind if q.kind not in {"number"} else "count"
        out.append((kind, q.value))
    return out


def quantulum(text: str) -> Gold:
    from quantulum3 import parser

    out: Gold = []
    for q in parser.parse(text):
        name = q.unit.name
        kind = "percent" if name == "percentage" else _Q3_KINDS.get(q.unit.entity.name, "")
        out.append((kind, q.value * _Q3_FACTORS.get(name, 1.0)))
    return out


def price_parser(text: str) -> Gold:
    from price_parser import Price

    p = Price.fromstring(text)
    return [("money", float(p.amount))] if p.amount is not None else []


def _match(found: Gold, gold: Gold) -> int:
    left = list(gold)
    hits = 0
    for kind, value in found:
        for g in left:
            if g[0] == kind and abs(g[1] - value) <= 0.01 * max(abs(g[1]), 1e-9):
                left.remove(g)
                hits += 1
                break
    return hits


def evaluate(name: str, fn: Callable[[str], Gold], corpus: list[tuple[str, Gold]]) -> None:
    found = gold = right = 0
    t0 = time.perf_counter()
    results = [fn(text) for text, _ in corpus]
    ms = (time.perf_counter() - t0) * 1000 / len(corpus)
    for (_, g), r in zip(corpus, results, strict=True):
        found += len(r)
        gold += len(g)
        right += _match(r, g)
    precision = right / max(found, 1)
    recall = right / max(gold, 1)
    print(
        f"{name:<14} precision {precision:.2f}  recall {recall:.2f}  "
        f"({right}/{gold}, {found} found)  {ms:.3f} ms/phrase"
    )


def main() -> None:
    evaluate("pcm", ours, CORPUS)
    try:
        quantulum("warm up")  # loads its unit tables once
        evaluate("quantulum3", quantulum, CORPUS)
    except ImportError:
        print("quantulum3 not installed")
    try:
        money = [(t, g) for t, g in CORPUS if any(k == "money" for k, _ in g)]
        evaluate("pcm (money)", lambda t: [x for x in ours(t) if x[0] == "money"], money)
        evaluate("price-parser", price_parser, money)
    except ImportError:
        print("price-parser not installed")


if __name__ == "__main__":
    main()
