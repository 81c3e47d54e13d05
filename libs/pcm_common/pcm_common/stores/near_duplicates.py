"""Near duplicates of new memories (`VectorStore.near_duplicates`): for each query, the
nearest stored point of its filter that states the same figures.

The search filters on the figures' keyword (`figures_key`, written by
`MemoryRecord.to_payload`), so it scores only the points that could be the same event
(docs/decisions/0009-near-duplicate-figures-key.md). Points stored before the keyword
existed have none and stay candidates, checked by their figures; when all the hits of a
query are such points with other figures, it is asked again of keyed points alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from pcm_common.domain.figures import FIGURES_KEY, figures_key, same_figures
from pcm_common.stores.vectors import (
    DuplicateQuery,
    Filter,
    ScoredPoint,
    SearchQuery,
    VectorStore,
)

# Hits asked of the first search: room for points stored before `figures_key` existed,
# which match whatever their figures.
FIRST_HITS = 4


def search(q: DuplicateQuery, *, unkeyed: bool) -> SearchQuery:
    """The search of `q`: of points with its figures' keyword, and with `unkeyed` of
    points without one too."""
    if q.flt.should:
        raise ValueError("a near-duplicate filter cannot have its own `should`")
    key = {FIGURES_KEY: figures_key(q.figures)}
    flt = Filter(
        must=dict(q.flt.must),
        must_not=dict(q.flt.must_not),
        ranges=dict(q.flt.ranges),
        should=[key, {FIGURES_KEY: None}] if unkeyed else [key],
    )
    limit = FIRST_HITS if unkeyed else 1
    return SearchQuery(q.tenant, q.vector, limit=limit, flt=flt, min_score=q.min_score)


async def nearest(
    store: VectorStore, queries: Sequence[DuplicateQuery], fields: Sequence[str], concurrency: int
) -> list[ScoredPoint | None]:
    """`VectorStore.near_duplicates` on `store`: one batch of searches, and a second for
    the queries whose hits were all unkeyed points with other figures."""
    asked = tuple(dict.fromkeys((*fields, "figures")))
    found = await store.search_many(
        [search(q, unkeyed=True) for q in queries], fields=asked, concurrency=concurrency
    )
    out: list[ScoredPoint | None] = []
    again: list[int] = []
    for n, (q, hits) in enumerate(zip(queries, found, strict=True)):
        same = next(
            (h for h in hits if same_figures(h.payload.get("figures", []), q.figures)), None
        )
        out.append(same)
        if same is None and len(hits) >= FIRST_HITS:
            again.append(n)
    if again:
        redone = await store.search_many(
            [search(queries[n], unkeyed=False) for n in again],
            fields=asked,
            concurrency=concurrency,
        )
        for n, hits in zip(again, redone, strict=True):
            out[n] = hits[0] if hits else None
    return out
