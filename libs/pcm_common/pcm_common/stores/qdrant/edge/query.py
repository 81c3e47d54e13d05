"""Qdrant Edge's side of query planning: the port's filters as the engine's, payload
selectors, the engine's spelling of a search (`DIALECT`; its shape is `qdrant.query`'s),
the batch of dense searches for one `query_batch`, and the exact cosines of a fused
search's hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import qdrant_edge as qe

from pcm_common.stores.qdrant.common import DENSE
from pcm_common.stores.vectors import Filter, SearchQuery, SparseVec


def _match(key: str, value: Any) -> Any:
    """One equality / any-of condition on `key`."""
    if value is None:
        return qe.FieldCondition(key=key, is_empty=True)
    if isinstance(value, bool):
        # Python bools reach the engine as integers; numpy.bool_ reaches it as a bool (the
        # stub allows bool only).
        return qe.FieldCondition(key=key, match=qe.MatchValue(np.bool_(value)))  # type: ignore[arg-type]
    if isinstance(value, float):
        return qe.FieldCondition(key=key, range=qe.RangeFloat(gte=value, lte=value))
    if isinstance(value, (list, tuple, set, frozenset)):
        values = list(value)
        if not values:
            # "Any of nothing" matches nothing; an empty `should` would match everything.
            return qe.HasIdCondition(set())
        if all(isinstance(v, str) for v in values):
            return qe.FieldCondition(key=key, match=qe.MatchAny(values))
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return qe.FieldCondition(key=key, match=qe.MatchAny(values))
        return qe.Filter(should=[_match(key, v) for v in values])
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def to_edge_filter(tenant: str, flt: Filter | None) -> qe.Filter:
    """Port filter -> Edge filter, always conditioned on the tenant."""
    must: list[Any] = [qe.FieldCondition(key="tenant", match=qe.MatchValue(tenant))]
    must_not: list[Any] = []
    should: list[Any] = []
    if flt is not None:
        must += [_match(k, v) for k, v in flt.must.items()]
        must_not += [_match(k, v) for k, v in flt.must_not.items()]
        for key, (gte, lte) in flt.ranges.items():
            if gte is None and lte is None:
                continue
            must.append(qe.FieldCondition(key=key, range=qe.RangeFloat(gte=gte, lte=lte)))
        should = [qe.Filter(must=[_match(k, v) for k, v in g.items()]) for g in flt.should]
    # Nest the should-groups so "at least one" never combines oddly with the other parts.
    if should:
        must.append(qe.Filter(should=should))
    return qe.Filter(must=must, must_not=must_not or None)


def selector(fields: Sequence[str] | None) -> Any:
    """The engine's payload selector for the port's `fields` (None: all; empty: none)."""
    if fields is None:
        return True
    return qe.PayloadSelector.Include(list(fields)) if fields else False


def hit_cosines(shard: qe.EdgeShard, query: list[float], hits: Sequence[Any]) -> dict[Any, float]:
    """The cosine of `query` to each hit's dense vector, scored by the engine over just
    those points. Returning the hits' vectors instead cost more
    (docs/decisions/0044-recall-store-reads.md)."""
    ids = {h.id for h in hits}
    if not ids:
        return {}
    request = qe.QueryRequest(
        limit=len(ids),
        query=qe.Query.Nearest(query, using=DENSE),
        filter=qe.Filter(must=[qe.HasIdCondition(ids)]),
        with_payload=False,
        with_vector=False,
    )
    return {h.id: float(h.score) for h in shard.query(request)}


class _Dialect:
    """Qdrant Edge's spelling of a search (`qdrant.query.Dialect`)."""

    def nearest(self, vector: list[float] | SparseVec, using: str) -> Any:
        if isinstance(vector, SparseVec):
            return qe.Query.Nearest(
                qe.SparseVector(list(vector.indices), list(vector.values)), using=using
            )
        return qe.Query.Nearest(vector, using=using)

    def fused(self, k: int) -> Any:
        return qe.Fusion.Rrf(k=k)

    def prefetch(self, query: Any, *, limit: int, flt: qe.Filter) -> qe.Prefetch:
        return qe.Prefetch(limit=limit, query=query, filter=flt)

    def request(
        self,
        query: Any,
        *,
        prefetches: list[qe.Prefetch] | None,
        flt: qe.Filter,
        limit: int,
        payload: Any,
        vectors: Any,
    ) -> qe.QueryRequest:
        return qe.QueryRequest(
            limit=limit,
            prefetches=prefetches,
            query=query,
            filter=flt,
            with_payload=payload,
            with_vector=vectors,
        )


DIALECT = _Dialect()


def batch_request(queries: Sequence[SearchQuery], payload: Any) -> qe.QueryBatchRequest:
    """Dense searches, one request each, for one `query_batch`."""
    requests = [
        qe.QueryRequest(
            limit=max(1, q.limit),
            query=qe.Query.Nearest([float(x) for x in q.vector], using=DENSE),
            filter=to_edge_filter(q.tenant, q.flt),
            with_payload=payload,
            with_vector=[DENSE] if q.with_vectors else False,
            # A hair below, so the engine's comparison never drops an equal score;
            # the exact cut is made by the caller.
            score_threshold=None if q.min_score is None else q.min_score - 1e-6,
        )
        for q in queries
    ]
    return qe.QueryBatchRequest(requests)
