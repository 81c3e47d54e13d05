"""Bare and ambiguous figures read as a memory's family states them (`resolve`): "21.45"
among "£22.08" entries is money, "28m" among calls is minutes, "bed 2336" among bedtimes a
clock; a reading is taken only near what the family states. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from pcm_common.domain.quantities import Quantity


def resolve(
    quantities: Sequence[Quantity],
    usual: Collection[str],
    typical: Mapping[str, float] | None = None,
) -> list[Quantity]:
    """The text's figures with bare ones read as its family states them (`usual`: the
    keys its family states): "21.45" among "£22.08" entries is money, "RHR 57" among
    "59 bpm" entries a heart rate, "1.6k" among rents 1,600 of money and among runs
    1.6 km, "28m" among calls minutes. The first bare number takes the one usual kind
    the text does not state, if there is exactly one."""
    have = {q.key for q in quantities}
    lacking = [k for k in usual if k not in have and not k.startswith(("number", "count"))]
    bare = sum(q.key == "number" for q in quantities)
    target = lacking[0] if len(lacking) == 1 and bare == 1 else None
    currencies = [k for k in usual if k.startswith("money:")]
    out: list[Quantity] = []
    for q in quantities:
        if q.key == "number" and target is not None:
            read = _as_clock(q) if target.startswith("time_of_day") else q
            if read is not None and typical and target in typical and target != "time_of_day":
                # "5.6" among sugars of 100 mg/dL is another unit, not a reading of that one
                read = read if _near(read.value, typical[target]) else None
            out.append(read._replace(key=target) if read is not None else q)
            target = None
        elif q.key == "number:k":
            key = currencies[0] if currencies else "distance"
            out.append(q._replace(key=key, value=q.value * 1000))
        elif q.key == "number:m":
            metres = "distance" in usual and "duration" not in usual
            if metres and typical and "distance" in typical:
                # "44m" beside runs of 6 km is minutes: metres only near the stated distances.
                metres = _near(q.value, typical["distance"])
            out.append(q._replace(key="distance" if metres else "duration",
                                  value=q.value * (1.0 if metres else 60.0)))  # fmt: skip
        else:
            out.append(q)
    return out


# How far (a factor) an ambiguous reading may lie from what the family states and still be
# taken: "800m" among 1-2 km walks is metres, "44m" among 6 km runs is not.
NEAR_FACTOR = 10.0


def _near(value: float, typical: float) -> bool:
    return typical > 0 and typical / NEAR_FACTOR <= value <= typical * NEAR_FACTOR


_HHMM = re.compile(r"(?:[01]?\d|2[0-3])[0-5]\d")


def _as_clock(q: Quantity) -> Quantity | None:
    """A bare figure among times of day, read as a 24-hour clock ("bed 2336": 23:36), or
    None when it is no such clock."""
    if not _HHMM.fullmatch(q.text):
        return None
    hhmm = int(q.text)
    return q._replace(value=float(hhmm // 100 * 60 + hhmm % 100))
