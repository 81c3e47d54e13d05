"""The in-memory vector store (`pcm_common.testing.MemoryVectorStore`) answers as the
embedded Qdrant Edge adapter does: one scenario of writes, reads, filters, pages,
searches and tenancy run against both, every answer compared, so the double cannot drift
from the store it stands in for. (Qdrant Edge runs in process: no server needed.)"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import Filter, SearchQuery, SparseVec, VectorPoint, VectorStore
from pcm_common.testing import MemoryVectorStore

DIM = 4
T1, T2 = "tenant-1", "tenant-2"


def _id(n: int) -> str:
    return str(uuid.UUID(int=n * 0x1000_0000_0000_0000_0001 + 7))


def _vec(n: int) -> list[float]:
    """Spread directions (distinct cosines to any query below: no ties)."""
    return [math.cos(n * 0.7), math.sin(n * 0.7), math.cos(n * 1.3) * 0.5, 0.25 + n * 0.01]


def _payload(n: int, tenant: str) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "user_id": None if n % 3 == 0 else f"u{n % 2}",
        "scope": ["global", "workspace", "project"][n % 3],
        "workspace": "w1" if n % 3 else "",
        "state": "archived" if n % 5 == 0 else "active",
        "pinned": n % 4 == 0,
        "created_ts": 1000.0 + n * 0.5,
        "figures_key": "5k" if n % 2 else "",
        "tags": ["a", "b"] if n % 2 else (["c"] if n % 3 else []),
        **({"episode": "e1"} if n % 4 == 1 else {}),
        "strength": {"s_ref": 0.25 * (n % 4)},
    }


POINTS = [VectorPoint(_id(n), _vec(n), _payload(n, T1 if n < 14 else T2)) for n in range(1, 20)]

FILTERS = {
    "all": None,
    "equal": Filter(must={"scope": "project"}),
    "any of": Filter(must={"state": ["active", "archived"], "scope": ["global", "project"]}),
    "none": Filter(must={"user_id": None}),
    "not": Filter(must_not={"state": "archived"}),
    "true": Filter(must={"pinned": True}),
    "false": Filter(must={"pinned": False}),
    "range": Filter(ranges={"created_ts": (1002.0, 1005.5)}),
    "open range": Filter(ranges={"strength.s_ref": (0.5, None)}),
    "dotted": Filter(must={"strength.s_ref": 0.25}),
    "list field": Filter(must={"tags": "a"}),
    "empty list": Filter(must={"tags": None}),
    "missing": Filter(must={"episode": None}),
    "not missing": Filter(must_not={"episode": None}),
    "should": Filter(should=[{"scope": "global"}, {"scope": "workspace", "workspace": "w1"}]),
    "should or empty": Filter(should=[{"figures_key": "5k"}, {"figures_key": None}]),
    "mixed": Filter(
        must={"user_id": ["u1", None]},
        must_not={"pinned": True},
        should=[{"scope": "global"}, {"scope": "project"}],
    ),
}


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[tuple[VectorStore, VectorStore]]:
    """The double and Qdrant Edge, each holding `POINTS`."""
    both: tuple[VectorStore, VectorStore] = (MemoryVectorStore(DIM), EdgeVectorStore(tmp_path, DIM))
    for s in both:
        await s.ensure_collection()
        await s.upsert(POINTS)
    try:
        yield both
    finally:
        for s in both:
            await s.close()


def _rounded(x: Any) -> Any:
    """Cosines compared to 5 places (the engine computes in float32)."""
    return round(x, 5) if isinstance(x, float) else x


async def _scenario(s: VectorStore) -> dict[str, Any]:
    """Every answer of the scenario, in a form two stores can be compared by."""
    out: dict[str, Any] = {}
    asked = [_id(3), _id(15), "not-a-uuid", _id(3).upper(), _id(99)]
    out["get"] = [(p.id, p.payload) for p in await s.get(T1, asked)]
    out["get fields"] = [(p.id, p.payload) for p in await s.get(T1, asked, fields=["scope"])]
    for name, flt in FILTERS.items():
        out[f"count {name}"] = [await s.count(T1, flt), await s.count(T2, flt)]
        pages, offset = [], None
        while True:
            page, offset = await s.scroll(T1, flt=flt, limit=3, offset=offset, fields=[])
            pages.append(([p.id for p in page], offset))
            if offset is None:
                break
        out[f"scroll {name}"] = pages
        hits = await s.search(T1, [1.0, 0.2, 0.1, 0.3], limit=4, flt=flt, fields=["state"])
        out[f"search {name}"] = [(h.id, _rounded(h.score), h.payload) for h in hits]
    batch = await s.search_many(
        [
            SearchQuery(T1, [0.3, 1.0, 0.0, 0.1], limit=3, min_score=0.5),
            SearchQuery(T2, [0.3, 1.0, 0.0, 0.1], limit=2, flt=FILTERS["not"]),
            SearchQuery(T1, [1.0, 0.0, 0.0, 0.0], limit=5, min_score=0.99),
        ],
        fields=[],
    )
    out["search_many"] = [[(h.id, _rounded(h.score)) for h in hits] for hits in batch]
    return out


async def _writes(s: VectorStore) -> dict[str, Any]:
    """Payload writes and deletes: a tenant changes only its own points."""
    out: dict[str, Any] = {}
    out["set own"] = await s.set_payload(T1, _id(2), {"state": "archived", "new": [1, 2]})
    out["set other's"] = await s.set_payload(T2, _id(2), {"state": "active"})
    out["set many"] = await s.set_payload_many(
        T1, [(_id(4), {"pinned": False}), (_id(15), {"pinned": True}), ("nope", {"x": 1})]
    )
    with pytest.raises(ValueError):
        await s.set_payload(T1, _id(2), {"tenant": T2})
    out["after writes"] = [(p.id, p.payload) for p in await s.get(T1, [_id(2), _id(4)])]
    out["t2 untouched"] = [(p.id, p.payload) for p in await s.get(T2, [_id(15)])]
    out["delete other's"] = await s.delete(T2, [_id(1)])
    out["delete own"] = await s.delete(T1, [_id(1), _id(1), _id(15), "nope"])
    out["counts"] = [await s.count(T1), await s.count(T2)]
    vec = await s.get(T1, [_id(5)], with_vectors=True)
    out["vector"] = [_rounded(x) for x in vec[0].vector or []]
    return out


@pytest.mark.parametrize("phase", ["reads", "writes"])
async def test_the_double_answers_as_qdrant_edge(
    stores: tuple[VectorStore, VectorStore], phase: str
) -> None:
    run = _scenario if phase == "reads" else _writes
    double, edge = [await run(s) for s in stores]
    assert edge.keys() == double.keys()
    for key in edge:
        assert double[key] == edge[key], key
    if phase == "reads":  # the filters select different points: the scenario can tell
        assert len({str(edge[f"scroll {n}"]) for n in FILTERS}) >= len(FILTERS) - 2
    else:  # a tenant changes its own points, never another's
        assert (edge["set own"], edge["set other's"], edge["set many"]) == (
            True,
            False,
            [True, False, False],
        )
        assert (edge["delete other's"], edge["delete own"]) == (0, 1)


async def test_hybrid_search_is_not_faked() -> None:
    """A hybrid (sparse) search needs a real adapter: the double says so."""
    s = MemoryVectorStore(DIM)
    with pytest.raises(NotImplementedError, match="hybrid"):
        await s.search(T1, _vec(1), limit=1, sparse=SparseVec([1], [1.0]))
