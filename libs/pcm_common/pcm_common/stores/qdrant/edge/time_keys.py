"""Calendar keys of a memory's creation time, for "created before t" as keyword conditions
on Qdrant Edge: the adapter writes them into every payload with a `created_at` (`stamped`)
and plans its searches with them (`created_until`); other stores never see them.

Why: a range condition on `created_ts` made a search over Qdrant Edge's unindexed segment
(where a store's newest ~13k memories live) check every point's time
(docs/decisions/0008-family-search-time-keys.md). A memory stores the UTC year, month,
day and hour it was created in (`keys`); `later_than(t)` lists the keys that only memories
created after the hour of `t` can have. Excluding any of them leaves every memory created
before `t`, plus the later ones of `t`'s own hour, which the caller drops by their exact
time.

Both work on datetimes, not epoch floats: a float rounds, and a time a microsecond before a
new hour (or the year 10000) must not land in the next one.
"""

from __future__ import annotations

import calendar
from datetime import datetime
from typing import Any

from pcm_common.domain.clock import as_utc

# The payload field that holds a memory's `keys`.
FIELD = "time_keys"


def keys(at: datetime) -> list[str]:
    """The UTC year, month, day and hour of `at` (naive: taken as UTC), one key each."""
    d = as_utc(at)
    y, m, day = f"{d.year:04d}", f"{d.month:02d}", f"{d.day:02d}"
    return [f"y{y}", f"m{y}-{m}", f"d{y}-{m}-{day}", f"h{y}-{m}-{day}T{d.hour:02d}"]


def later_than(at: datetime, until_year: int) -> list[str]:
    """Keys held only by memories created after the UTC hour of `at`: the later hours of
    its day, days of its month, months of its year, and the years up to `until_year`
    (~40-70 keys for a recent `at`, one more per year further back). A memory created
    after `until_year` holds none of them."""
    d = as_utc(at)
    y, m, day = f"{d.year:04d}", f"{d.month:02d}", f"{d.day:02d}"
    out = [f"y{later:04d}" for later in range(d.year + 1, until_year + 1)]
    out += [f"m{y}-{later:02d}" for later in range(d.month + 1, 13)]
    last_day = calendar.monthrange(d.year, d.month)[1]
    out += [f"d{y}-{m}-{later:02d}" for later in range(d.day + 1, last_day + 1)]
    out += [f"h{y}-{m}-{day}T{later:02d}" for later in range(d.hour + 1, 24)]
    return out


def stamped(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` (a point's, or a patch) with the `keys` of its `created_at` (an ISO time,
    as `MemoryRecord.to_payload` writes it); one without a readable `created_at` as it is."""
    at = payload.get("created_at")
    if isinstance(at, str):
        try:
            at = datetime.fromisoformat(at)
        except ValueError:
            return payload
    if not isinstance(at, datetime):
        return payload
    return {**payload, FIELD: keys(at)}
