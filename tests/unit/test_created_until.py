"""Searches of points created up to a time (`SearchQuery.created_until`): the Edge
adapter's plan (`pcm_common.stores.qdrant.edge.created_until`), by calendar keys then the
range where ranges are dear, and the port's range alone; both give what a brute-force cut
gives."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from pcm_common.stores.qdrant.edge import created_until, time_keys
from pcm_common.stores.vectors import ScoredPoint, SearchQuery, VectorPoint, VectorStore
from pcm_common.testing import MemoryVectorStore

T0 = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
QUERY = [1.0, 0.0, 0.0, 0.0]


class Keyed(MemoryVectorStore):
    """An in-memory store whose batch searches plan their cuts as the Edge adapter's do
    where its ranges are dear (the engine's own searches need a shard)."""

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        return await created_until.search_many(
            queries,
            fields,
            cheap_ranges=lambda _: False,
            run=lambda batch, asked: self._search_batch(batch, asked, concurrency),
        )


def _vec(n: int) -> list[float]:
    """Nearer to `QUERY` the smaller `n` (no ties)."""
    angle = 0.01 + 0.02 * n
    return [math.cos(angle), math.sin(angle), 0.0, 0.0]


def _point(n: int, at: datetime | None) -> VectorPoint:
    payload: dict[str, Any] = {"tenant": "t", "text": f"m{n}"}
    if at is not None:
        # What `MemoryRecord.to_payload` writes, stamped as the Edge adapter stamps it.
        at_iso = at.isoformat()
        payload |= time_keys.stamped({"created_at": at_iso, "created_ts": at.timestamp()})
    return VectorPoint(str(uuid.UUID(int=n + 1)), _vec(n), payload)


async def _stores(times: list[datetime | None]) -> list[VectorStore]:
    stores: list[VectorStore] = [Keyed(), MemoryVectorStore()]
    for s in stores:
        await s.upsert([_point(n, at) for n, at in enumerate(times)])
    return stores


def _expected(times: list[datetime | None], cut: datetime, limit: int) -> list[str]:
    """The brute-force answer: the nearest `limit` points created at or before `cut`."""
    earlier = [n for n, at in enumerate(times) if at is not None and at <= cut]
    return [str(uuid.UUID(int=n + 1)) for n in sorted(earlier)[:limit]]


def _searches(kind: str) -> float:
    return REGISTRY.get_sample_value("pcm_family_searches_total", {"search": kind}) or 0.0


def _query(cut: datetime, limit: int) -> SearchQuery:
    return SearchQuery("t", QUERY, limit=limit, created_until=cut.timestamp())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.integers(min_value=-3 * 3600, max_value=3 * 3600)),
        min_size=1,
        max_size=40,
    ),
    st.integers(min_value=-3600, max_value=3600),
    st.integers(min_value=1, max_value=12),
)
def test_both_plans_give_the_brute_force_cut(
    offsets: list[int | None], cut_s: int, limit: int
) -> None:
    """Points spread over hours around the cut, some in its own hour on either side of
    it, some without a time: each plan finds exactly the nearest earlier ones."""
    times = [None if o is None else T0 + timedelta(seconds=o) for o in offsets]
    cut = T0 + timedelta(seconds=cut_s)

    async def run() -> None:
        for store in await _stores(times):
            (hits,) = await store.search_many([_query(cut, limit)], fields=("text",))
            assert [h.id for h in hits] == _expected(times, cut, limit)
            # `created_ts` was read to drop later points, and not handed back.
            assert all(set(h.payload) == {"text"} for h in hits)

    asyncio.run(run())


async def test_the_plans_and_their_counts() -> None:
    later = [T0 + timedelta(minutes=1 + m) for m in range(created_until.KEYED_SLACK + 2)]
    # Nearest first: later points of the cut's hour, then earlier hours' points.
    crowded = [*later, *(T0 - timedelta(hours=2, minutes=m) for m in range(6))]
    sparse = [T0 + timedelta(minutes=5), *(T0 - timedelta(days=d) for d in range(1, 4))]
    dense_store, cheap_store = await _stores(crowded)
    keyed, ranged = _searches("keyed"), _searches("ranged")
    # The keys leave the later points of the cut's hour: more of them than the slack,
    # all nearer than any earlier one, so the keyed hits prove nothing: asked again.
    (hits,) = await dense_store.search_many([_query(T0, 3)])
    assert [h.id for h in hits] == _expected(crowded, T0, 3)
    assert "created_ts" in hits[0].payload  # whole payloads asked: kept
    assert (_searches("keyed") - keyed, _searches("ranged") - ranged) == (1, 1)
    # The port's plan: the range alone.
    (hits,) = await cheap_store.search_many([_query(T0, 3)])
    assert [h.id for h in hits] == _expected(crowded, T0, 3)
    assert (_searches("keyed") - keyed, _searches("ranged") - ranged) == (1, 2)
    # Few later points of the hour: the keyed hits hold the answer.
    dense_store, _ = await _stores(sparse)
    (hits,) = await dense_store.search_many([_query(T0, 2)])
    assert [h.id for h in hits] == _expected(sparse, T0, 2)
    assert (_searches("keyed") - keyed, _searches("ranged") - ranged) == (2, 2)


async def test_other_queries_of_the_batch_are_untouched() -> None:
    times: list[datetime | None] = [T0 + timedelta(hours=1), T0 - timedelta(hours=1), None]
    store, _ = await _stores(times)
    plain = SearchQuery("t", QUERY, limit=5)
    keyed = _searches("keyed")
    both, cut, empty = await store.search_many([plain, _query(T0, 5), _query(T0, 0)], fields=())
    assert len(both) == 3 and all(h.payload == {} for h in both)
    assert [h.id for h in cut] == _expected(times, T0, 5) and empty == []
    assert _searches("keyed") - keyed == 1  # the query of limit 0 is not searched by keys
