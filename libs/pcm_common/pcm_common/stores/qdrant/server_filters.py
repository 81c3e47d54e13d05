"""The Qdrant server adapter's filters and field selectors, and its dialect of the hybrid
query (`qdrant.query`): the port's `Filter` in qdrant-client's models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdrant_client import models

from pcm_common.stores.vectors import Filter, SparseVec


def _match(key: str, value: Any) -> models.Condition:
    """One equality / any-of condition on `key`."""
    if value is None:
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=key))
    if isinstance(value, bool):
        return models.FieldCondition(key=key, match=models.MatchValue(value=value))
    if isinstance(value, float):
        return models.FieldCondition(key=key, range=models.Range(gte=value, lte=value))
    if isinstance(value, (list, tuple, set, frozenset)):
        values = list(value)
        if not values:
            # "Any of nothing" matches nothing; an empty `should` would match everything.
            return models.HasIdCondition(has_id=[])
        if all(isinstance(v, str) for v in values) or all(
            isinstance(v, int) and not isinstance(v, bool) for v in values
        ):
            return models.FieldCondition(key=key, match=models.MatchAny(any=values))
        return models.Filter(should=[_match(key, v) for v in values])
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def selector(fields: Sequence[str] | None) -> bool | list[str]:
    """qdrant-client's `with_payload` for the port's `fields` (None: all; empty: none)."""
    return True if fields is None else (list(fields) if fields else False)


def tenant_cond(tenant: str) -> models.FieldCondition:
    return models.FieldCondition(key="tenant", match=models.MatchValue(value=tenant))


def to_qdrant_filter(tenant: str, flt: Filter | None) -> models.Filter:
    """Port filter -> qdrant-client filter, always conditioned on the tenant."""
    must: list[models.Condition] = [tenant_cond(tenant)]
    must_not: list[models.Condition] = []
    if flt is not None:
        must += [_match(k, v) for k, v in flt.must.items()]
        must_not += [_match(k, v) for k, v in flt.must_not.items()]
        for key, (gte, lte) in flt.ranges.items():
            if gte is None and lte is None:
                continue
            must.append(models.FieldCondition(key=key, range=models.Range(gte=gte, lte=lte)))
        if flt.should:
            # Nested so "at least one group" stays independent of the other parts.
            groups: list[models.Condition] = [
                models.Filter(must=[_match(k, v) for k, v in g.items()]) for g in flt.should
            ]
            must.append(models.Filter(should=groups))
    return models.Filter(must=must, must_not=must_not or None)


class _Dialect:
    """qdrant-client's spelling of a search (`query.Dialect`): the keyword arguments of
    `query_points`, a scoring query being its `query` and `using`."""

    def nearest(self, vector: list[float] | SparseVec, using: str) -> dict[str, Any]:
        if isinstance(vector, SparseVec):
            sparse = models.SparseVector(indices=list(vector.indices), values=list(vector.values))
            return {"query": sparse, "using": using}
        return {"query": vector, "using": using}

    def fused(self, k: int) -> dict[str, Any]:
        return {"query": models.RrfQuery(rrf=models.Rrf(k=k))}

    def prefetch(self, query: dict[str, Any], *, limit: int, flt: models.Filter) -> models.Prefetch:
        return models.Prefetch(**query, limit=limit, filter=flt)

    def request(
        self,
        query: dict[str, Any],
        *,
        prefetches: list[models.Prefetch] | None,
        flt: models.Filter,
        limit: int,
        payload: Any,
        vectors: Any,
    ) -> dict[str, Any]:
        return {
            **query,
            "prefetch": prefetches,
            "query_filter": flt,
            "limit": limit,
            "with_payload": payload,
            "with_vectors": vectors,
        }


DIALECT = _Dialect()
