"""The store's near-duplicate lookup (`VectorStore.near_duplicates`,
`pcm_common.stores.near_duplicates`) on the in-memory double: the nearest point stating the
same figures, points stored before the figures' keyword existed still found, and a second
search when all the first one's hits were such points with other figures."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from pcm_common.domain.figures import FIGURES_KEY, figures_key
from pcm_common.stores import near_duplicates
from pcm_common.stores.vectors import DuplicateQuery, Filter, ScoredPoint, SearchQuery, VectorPoint
from pcm_common.testing import MemoryVectorStore

QUERY = [1.0, 0.0, 0.0, 0.0]
FIGURES = ["5k", "27:10"]


class Counting(MemoryVectorStore):
    """Counts the batches of searches asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        self.batches.append(len(queries))
        return await super().search_many(queries, fields=fields, concurrency=concurrency)


def _id(n: int) -> str:
    return str(uuid.UUID(int=n + 1))


def _point(n: int, figures: list[str], *, keyed: bool = True, user: str = "u") -> VectorPoint:
    """Nearer to `QUERY` the smaller `n` (cos 0.9998 down to ~0.93 at n=9)."""
    angle = 0.02 + 0.04 * n
    payload: dict[str, Any] = {"tenant": "t", "user_id": user, "text": f"m{n}", "figures": figures}
    if keyed:
        payload[FIGURES_KEY] = figures_key(figures)
    return VectorPoint(_id(n), [math.cos(angle), math.sin(angle), 0.0, 0.0], payload)


def _query(figures: list[str] = FIGURES, user: str = "u") -> DuplicateQuery:
    return DuplicateQuery("t", QUERY, figures, Filter(must={"user_id": user}), 0.9)


async def _store(points: list[VectorPoint]) -> Counting:
    store = Counting()
    await store.upsert(points)
    return store


async def test_the_nearest_point_with_the_same_figures() -> None:
    # Nearer points with other figures, and one of another user, are not the duplicate.
    store = await _store(
        [
            _point(0, ["5k", "27:11"]),
            _point(1, FIGURES, user="v"),
            _point(2, FIGURES),
            _point(3, FIGURES),
        ]
    )
    (hit, none) = await store.near_duplicates([_query(), _query(["41:30"])], fields=("text",))
    assert hit is not None and hit.id == _id(2) and hit.payload["text"] == "m2"
    assert none is None
    assert store.batches == [2]


async def test_points_without_the_keyword_are_still_found() -> None:
    store = await _store([_point(0, ["5k", "27:11"]), _point(1, FIGURES, keyed=False)])
    (hit,) = await store.near_duplicates([_query()])
    assert hit is not None and hit.id == _id(1)
    assert store.batches == [1]  # the first search held it


async def test_unkeyed_points_with_other_figures_do_not_hide_the_duplicate() -> None:
    nearer = [
        _point(n, ["5k", f"27:1{n + 1}"], keyed=False) for n in range(near_duplicates.FIRST_HITS)
    ]
    store = await _store([*nearer, _point(9, FIGURES)])
    (hit,) = await store.near_duplicates([_query()])
    assert hit is not None and hit.id == _id(9)
    assert store.batches == [1, 1]  # asked again of keyed points alone
    # Below the query's cosine: no duplicate, however the figures agree.
    far = DuplicateQuery("t", QUERY, FIGURES, Filter(must={"user_id": "u"}), 0.99)
    assert await store.near_duplicates([far]) == [None]


async def test_a_filter_with_its_own_should_is_refused() -> None:
    store = await _store([])
    with pytest.raises(ValueError, match="should"):
        await store.near_duplicates(
            [DuplicateQuery("t", QUERY, FIGURES, Filter(should=[{"scope": "global"}]), 0.9)]
        )
