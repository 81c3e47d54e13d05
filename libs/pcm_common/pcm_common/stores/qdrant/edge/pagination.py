"""Pagination on Qdrant Edge: scrolls (one, or many in one worker-thread hop), timelines
ordered by the engine, counts and samples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import qdrant_edge as qe

from pcm_common.stores.qdrant.common import DENSE, dense_of, is_uuid
from pcm_common.stores.qdrant.edge.base import EdgeBase
from pcm_common.stores.qdrant.edge.query import selector, to_edge_filter
from pcm_common.stores.vectors import Filter, ScoredPoint

T = TypeVar("T")


class EdgePagination(EdgeBase):
    """Scrolls, timelines, counts (module docstring)."""

    async def sample(self, n: int) -> list[ScoredPoint]:
        request = qe.ScrollRequest(
            limit=n,
            with_payload=qe.PayloadSelector.Include(["text"]),
            with_vector=[DENSE],
        )
        records, _ = await self._run(lambda: self._read(lambda s: s.scroll(request), "sample"))
        return [stored(r, True) for r in records]

    async def scroll(
        self,
        tenant: str,
        *,
        flt: Filter | None = None,
        limit: int = 100,
        offset: str | None = None,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> tuple[list[ScoredPoint], str | None]:
        if offset is not None and not is_uuid(offset):
            raise ValueError(f"scroll offset must be a point id: {offset!r}")
        request = qe.ScrollRequest(
            offset=offset,
            limit=limit,
            filter=to_edge_filter(tenant, flt),
            with_payload=selector(fields),
            with_vector=[DENSE] if with_vectors else False,
        )
        records, next_offset = await self._run(
            lambda: self._read(lambda s: s.scroll(request), "scroll")
        )
        points = [stored(r, with_vectors) for r in records]
        return points, (str(next_offset) if next_offset is not None else None)

    async def scroll_many(
        self,
        tenant: str,
        filters: Sequence[Filter],
        *,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[list[ScoredPoint]]:
        """All the scrolls in one worker-thread hop: a recall's episode reads, one hop each,
        cost more in thread hand-offs and GIL contention than in reading
        (docs/decisions/0044-recall-store-reads.md)."""
        return await self._scroll_batch(
            tenant, filters, lambda r: stored(r, False), limit=limit, payload=selector(fields)
        )

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        """Ordered by the engine (`order_by` on `key`'s range index), ids and order values
        only, all the reads in one worker-thread hop."""
        return await self._scroll_batch(
            tenant,
            filters,
            lambda r: (str(r.id), float(r.order_value or 0.0)),
            limit=limit,
            payload=False,
            order_by=qe.OrderBy(key),
        )

    async def _scroll_batch(
        self,
        tenant: str,
        filters: Sequence[Filter],
        convert: Callable[[Any], T],
        *,
        limit: int,
        payload: Any,
        order_by: qe.OrderBy | None = None,
    ) -> list[list[T]]:
        """The first page of each filter's scroll, every record through `convert`, in one
        worker-thread hop (no vectors)."""
        requests = [
            qe.ScrollRequest(
                limit=limit,
                filter=to_edge_filter(tenant, f),
                with_payload=payload,
                with_vector=False,
                order_by=order_by,
            )
            for f in filters
        ]

        def read(shard: qe.EdgeShard) -> list[list[T]]:
            return [[convert(r) for r in shard.scroll(q)[0]] for q in requests]

        return await self._run(lambda: self._read(read, "scroll_many")) if requests else []

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        request = qe.CountRequest(exact=True, filter=to_edge_filter(tenant, flt))
        return int(await self._run(lambda: self._read(lambda s: s.count(request), "count")))


def stored(record: Any, with_vectors: bool) -> ScoredPoint:
    """A stored record (get, scroll) as a point of the port: no score."""
    return ScoredPoint(
        id=str(record.id),
        score=0.0,
        payload=dict(record.payload or {}),
        vector=dense_of(record.vector) if with_vectors else None,
    )
