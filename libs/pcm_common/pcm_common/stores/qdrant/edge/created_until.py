"""The Edge adapter's plan for batch searches of points created up to a time
(`SearchQuery.created_until`): by calendar keys, then the exact range where the keys could
not prove the answer. Other adapters ask the range alone (`SearchQuery.ranged`).

Why two plans: a range condition on `created_ts` made a search over Qdrant Edge's unindexed
segment (where a store's newest ~13k memories live) check every point's time
(docs/decisions/0008-family-search-time-keys.md).
So, where ranges are not cheap, a search first leaves out the later points by their
calendar keys (`time_keys`): every key of an hour after the cut's. What is left
is every earlier point plus the later ones of the cut's own hour, dropped here by their
exact time. A search whose hits cannot prove that they hold the `limit` nearest earlier
points is asked again with the exact range. Where ranges cost no more than the keys (the
dense mirror holds the tenant: `Capabilities.cheap_ranges`) the range is asked alone.

Points without `created_ts` never match: a range does not match a missing field, and the
keyed plan drops them with the later ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from enum import Enum

from pcm_common.domain.clock import utcnow
from pcm_common.domain.filters import Filter
from pcm_common.runtime.telemetry import FAMILY_SEARCHES
from pcm_common.stores.qdrant.edge import time_keys
from pcm_common.stores.vectors import CREATED_FIELD as FIELD
from pcm_common.stores.vectors import ScoredPoint, SearchQuery

# Extra hits asked of a keyed search: room for the later points of the cut's own hour
# (the searching memory itself and the rest of its episode).
KEYED_SLACK = 8

Hits = list[ScoredPoint]
Run = Callable[[list[SearchQuery], Sequence[str] | None], Awaitable[list[Hits]]]


class Plan(Enum):
    PLAIN = "plain"  # no `created_until`: the query as it is
    RANGED = "ranged"  # the exact range on `created_ts`
    KEYED = "keyed"  # calendar keys, the later points of the cut's hour dropped here


def keyed(q: SearchQuery, until_year: int) -> SearchQuery:
    """`q` with its cut as calendar keys left out (those of the hours after the cut's, up
    to `until_year`), `KEYED_SLACK` more hits asked."""
    assert q.created_until is not None
    flt = q.flt or Filter()
    cut = datetime.fromtimestamp(q.created_until, UTC)
    later = time_keys.later_than(cut, until_year)
    return dataclasses.replace(
        q,
        limit=q.limit + KEYED_SLACK,
        flt=dataclasses.replace(flt, must_not={**flt.must_not, time_keys.FIELD: later}),
        created_until=None,
    )


def earlier(hits: Hits, cut: float) -> Hits:
    """The hits created at or before `cut`, in their order."""
    return [
        h
        for h in hits
        if isinstance(ts := h.payload.get(FIELD), int | float)
        and not isinstance(ts, bool)
        and ts <= cut
    ]


def plan(q: SearchQuery, cheap_ranges: Callable[[str], bool]) -> Plan:
    if q.created_until is None or q.limit <= 0:
        return Plan.PLAIN
    return Plan.RANGED if cheap_ranges(q.tenant) else Plan.KEYED


async def search_many(
    queries: Sequence[SearchQuery],
    fields: Sequence[str] | None,
    *,
    cheap_ranges: Callable[[str], bool],
    run: Run,
) -> list[Hits]:
    """`queries` answered by `run` (the adapter's batch of plain searches, `fields` of the
    payloads), each with a `created_until` planned by `cheap_ranges` of its tenant."""
    plans = [plan(q, cheap_ranges) for q in queries]
    if all(p is Plan.PLAIN for p in plans):
        return await run(list(queries), fields)
    until_year = utcnow().year + 1
    first = [
        keyed(q, until_year) if p is Plan.KEYED else q.ranged() if p is Plan.RANGED else q
        for q, p in zip(queries, plans, strict=True)
    ]
    # The keyed plan drops hits by their time: read it, and give back only what was asked.
    asked = fields if fields is None or FIELD in fields else (*fields, FIELD)
    out = await run(first, asked)
    again: list[int] = []
    for n, (q, p) in enumerate(zip(queries, plans, strict=True)):
        if p is not Plan.KEYED:
            continue
        assert q.created_until is not None
        kept = earlier(out[n], q.created_until)
        # Proven: `limit` earlier hits (the nearest, as hits come nearest first), or
        # fewer hits than asked (nothing else matched).
        if len(kept) >= q.limit or len(out[n]) < first[n].limit:
            out[n] = kept[: q.limit]
        else:
            again.append(n)
    redone = await run([queries[n].ranged() for n in again], asked) if again else []
    for n, hits in zip(again, redone, strict=True):
        out[n] = hits
    if asked is not fields:
        for hits in out:
            for h in hits:
                h.payload = {k: v for k, v in h.payload.items() if k != FIELD}
    FAMILY_SEARCHES.labels(search="keyed").inc(plans.count(Plan.KEYED))
    FAMILY_SEARCHES.labels(search="ranged").inc(plans.count(Plan.RANGED) + len(again))
    return out
