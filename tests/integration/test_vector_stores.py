"""One behaviour suite for both VectorStore adapters (Edge shard, qdrant-client local mode)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pcm_common.models.sparse import encode_document, encode_query
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.qdrant.server import ServerVectorStore
from pcm_common.stores.vectors import Filter, SearchQuery, VectorPoint, VectorStore

DIM = 16
RNG = np.random.default_rng(7)


def unit(v: np.ndarray) -> list[float]:
    return (v / np.linalg.norm(v)).astype(float).tolist()


def rand_vec() -> list[float]:
    return unit(RNG.standard_normal(DIM))


def cosine(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a), np.asarray(b)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def make_point(
    tenant: str, text: str = "", vector: list[float] | None = None, **payload: Any
) -> VectorPoint:
    base: dict[str, Any] = {
        "tenant": tenant,
        "user_id": "u1",
        "scope": "global",
        "state": "active",
        "pinned": False,
        "importance": "normal",
        "created_ts": 1000.0,
        "graph": {"extracted": False, "entities": []},
        "text": text,
    }
    base.update(payload)
    return VectorPoint(
        id=str(uuid.uuid4()),
        vector=vector if vector is not None else rand_vec(),
        payload=base,
        sparse=encode_document(text) if text else None,
    )


# The Edge adapter without its payload cache, with one that holds everything here, and
# with one of 3 payloads (most reads mix cached and engine payloads, evictions on the way).
EDGE_CACHES = {"edge": 0, "edge-cached": 10_000, "edge-cache-3": 3}


# "server-sharded": custom sharding by tenant (docs/cluster.md), every call naming its
# tenant's shard key; local mode ignores the shard keys, so the behaviour must not change.
@pytest.fixture(params=[*EDGE_CACHES, "server", "server-sharded"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    s: VectorStore
    if request.param in EDGE_CACHES:
        s = EdgeVectorStore(tmp_path / "shard", dim=DIM, payload_cache=EDGE_CACHES[request.param])
    else:
        groups = 4 if request.param == "server-sharded" else 0
        s = ServerVectorStore(
            location=":memory:", collection="t_" + uuid.uuid4().hex, dim=DIM, shard_groups=groups
        )
    await s.ensure_collection()
    yield s
    await s.close()


async def test_ensure_collection_idempotent(store: VectorStore) -> None:
    p = make_point("A")
    await store.upsert([p])
    await store.ensure_collection()
    await store.ensure_collection()
    assert [x.id for x in await store.get("A", [p.id])] == [p.id]


async def test_crud_roundtrip(store: VectorStore) -> None:
    p = make_point("A", "hello world", state="active")
    q = make_point("A", "second note")
    await store.upsert([p, q])

    got = await store.get("A", [p.id, q.id, str(uuid.uuid4()), "not-a-uuid"], with_vectors=True)
    assert {g.id for g in got} == {p.id, q.id}
    g = next(x for x in got if x.id == p.id)
    assert g.payload["text"] == "hello world"
    assert g.score == 0.0
    assert g.vector is not None and cosine(g.vector, p.vector) == pytest.approx(1.0, abs=1e-5)
    assert (await store.get("A", [p.id]))[0].vector is None

    # set_payload merges top-level keys and keeps the others.
    assert await store.set_payload("A", p.id, {"state": "archived", "graph": {"extracted": True}})
    g = (await store.get("A", [p.id]))[0]
    assert g.payload["state"] == "archived"
    assert g.payload["graph"] == {"extracted": True}
    assert g.payload["text"] == "hello world"
    assert not await store.set_payload("A", str(uuid.uuid4()), {"state": "x"})
    # Several patches at once: each applied to its own point, one answer per patch.
    done = await store.set_payload_many(
        "A", [(q.id, {"importance": "high"}), (str(uuid.uuid4()), {}), (p.id, {"pinned": True})]
    )
    assert done == [True, False, True]
    assert (await store.get("A", [q.id]))[0].payload["importance"] == "high"
    assert (await store.get("A", [p.id]))[0].payload["pinned"] is True
    assert await store.set_payload_many("B", [(p.id, {"state": "x"})]) == [False]
    assert (await store.get("A", [p.id]))[0].payload["state"] == "archived"

    # Upsert replaces the whole point.
    p2 = VectorPoint(id=p.id, vector=p.vector, payload={"tenant": "A", "text": "replaced"})
    await store.upsert([p2])
    assert (await store.get("A", [p.id]))[0].payload == {"tenant": "A", "text": "replaced"}

    assert await store.count("A") == 2
    assert await store.delete("A", [p.id, str(uuid.uuid4())]) == 1
    assert await store.count("A") == 1
    assert await store.get("A", [p.id]) == []
    assert await store.delete("A", [p.id]) == 0


async def test_set_payload_many_equal_and_repeated_patches(store: VectorStore) -> None:
    """Equal patches of several points (a consumer marking a batch), a point patched twice
    (the later patch wins) and another tenant's point in the same call."""
    mine = [make_point("A") for _ in range(4)]
    theirs = make_point("B")
    await store.upsert([*mine, theirs])
    mark = {"graph": {"extracted": True}}
    done = await store.set_payload_many(
        "A",
        [
            *((p.id, dict(mark)) for p in mine[:3]),
            (theirs.id, dict(mark)),
            (mine[3].id, {"importance": "low"}),
            (mine[3].id, {"importance": "high"}),
        ],
    )
    assert done == [True, True, True, False, True, True]
    got = {p.id: p.payload for p in await store.get("A", [p.id for p in mine])}
    assert all(got[p.id]["graph"] == {"extracted": True} for p in mine[:3])
    assert got[mine[3].id]["importance"] == "high"
    assert got[mine[3].id]["graph"] == mine[3].payload["graph"] != mark["graph"]
    (other,) = await store.get("B", [theirs.id])
    assert other.payload["graph"] == theirs.payload["graph"]
    # 1 and 1.0, true and 1 are different values: never merged into one write.
    await store.set_payload_many("A", [(mine[0].id, {"v": 1}), (mine[1].id, {"v": 1.0})])
    await store.set_payload_many("A", [(mine[2].id, {"w": True}), (mine[3].id, {"w": 1})])
    got = {p.id: p.payload for p in await store.get("A", [p.id for p in mine])}
    assert type(got[mine[0].id]["v"]) is int and type(got[mine[1].id]["v"]) is float
    assert got[mine[2].id]["w"] is True and type(got[mine[3].id]["w"]) is int


async def test_timelines_in_order_of_the_key(store: VectorStore) -> None:
    """Ids with their `created_ts`, ascending, per filter, within the tenant, cut at
    `limit`; the port's own paging version gives the same answer."""
    pts = [make_point("A", f"t{i}") for i in range(12)] + [make_point("B") for _ in range(3)]
    times = [1000.0 + ((i * 7) % 12) * 60 for i in range(12)]
    for p, t in zip(pts, times, strict=False):
        p.payload["created_ts"] = t
        p.payload["episode"] = "e1" if t < 1400 else "e2"
    for p in pts[12:]:
        p.payload["created_ts"], p.payload["episode"] = 900.0, "e1"
    await store.upsert(pts)
    flts = [
        Filter(must={"episode": "e1"}),
        Filter(must={"episode": "e2"}, ranges={"created_ts": (1500.0, None)}),
    ]
    lines = await store.timelines("A", flts, key="created_ts", limit=5)
    by_time = sorted(zip(times, (p.id for p in pts), strict=False))
    assert lines[0] == [(pid, t) for t, pid in by_time if t < 1400][:5]
    assert lines[1] == [(pid, t) for t, pid in by_time if t >= 1500][:5]
    assert await VectorStore.timelines(store, "A", flts, key="created_ts", limit=5) == lines
    assert await store.timelines("A", [], key="created_ts", limit=5) == []


async def test_scroll_pages(store: VectorStore) -> None:
    pts = [make_point("A") for _ in range(7)] + [make_point("B") for _ in range(3)]
    await store.upsert(pts)
    seen: list[str] = []
    offset: str | None = None
    for _ in range(10):
        page, offset = await store.scroll("A", limit=3, offset=offset, with_vectors=True)
        assert len(page) <= 3
        assert all(p.vector is not None and len(p.vector) == DIM for p in page)
        seen += [p.id for p in page]
        if offset is None:
            break
    assert sorted(seen) == sorted(p.id for p in pts[:7])
    assert len(seen) == len(set(seen))


async def test_tenant_isolation(store: VectorStore) -> None:
    q = rand_vec()
    a = make_point("A", "zorblax meeting", vector=q)
    b = make_point("B", "zorblax meeting", vector=q)
    await store.upsert([a, b])

    assert [x.id for x in await store.get("B", [a.id, b.id])] == [b.id]
    assert [x.id for x in await store.search("B", q, limit=10)] == [b.id]
    hybrid = await store.search("B", q, limit=10, sparse=encode_query("zorblax"))
    assert [x.id for x in hybrid] == [b.id]
    page, _ = await store.scroll("B", limit=10)
    assert [x.id for x in page] == [b.id]
    assert await store.count("B") == 1
    assert await store.count("C") == 0

    # Writes aimed at another tenant's point fail and change nothing.
    assert not await store.set_payload("B", a.id, {"state": "archived"})
    assert (await store.get("A", [a.id]))[0].payload["state"] == "active"
    assert await store.delete("B", [a.id]) == 0
    assert await store.count("A") == 1
    with pytest.raises(ValueError):
        await store.set_payload("A", a.id, {"tenant": "B"})

    # Filters cannot widen the tenant.
    f = Filter(should=[{"tenant": "A"}, {"tenant": "B"}])
    assert {x.id for x in await store.search("B", q, limit=10, flt=f)} == {b.id}
    assert await store.count("B", Filter(must={"tenant": ["A", "B"]})) == 1


async def test_filters(store: VectorStore) -> None:
    pts = [
        make_point("A", scope="global", created_ts=100.0, pinned=True),
        make_point(
            "A", scope="workspace", workspace="w1", created_ts=200.0, graph={"extracted": True}
        ),
        make_point("A", scope="workspace", workspace="w2", created_ts=300.0, importance="high"),
        make_point(
            "A",
            scope="project",
            workspace="w1",
            project="p1",
            created_ts=400.0,
            state="archived",
            graph={"extracted": True},
        ),
    ]
    await store.upsert(pts)
    ids = [p.id for p in pts]
    q = rand_vec()

    async def check(flt: Filter, expected: list[int]) -> None:
        want = {ids[i] for i in expected}
        assert await store.count("A", flt) == len(want), flt
        assert {x.id for x in await store.search("A", q, limit=10, flt=flt)} == want, flt
        page, _ = await store.scroll("A", flt=flt, limit=10)
        assert {x.id for x in page} == want, flt

    await check(Filter(must={"scope": "workspace"}), [1, 2])
    await check(Filter(must={"scope": ["global", "project"]}), [0, 3])
    await check(Filter(must={"pinned": True}), [0])
    await check(Filter(must={"pinned": False}), [1, 2, 3])
    await check(Filter(must={"graph.extracted": True}), [1, 3])
    await check(Filter(must={"graph.extracted": False}), [0, 2])
    await check(Filter(must_not={"state": "archived"}), [0, 1, 2])
    await check(Filter(must_not={"importance": ["high", "low"]}), [0, 1, 3])
    await check(Filter(ranges={"created_ts": (200.0, 300.0)}), [1, 2])
    await check(Filter(ranges={"created_ts": (None, 200.0)}), [0, 1])
    await check(Filter(ranges={"created_ts": (250.0, None)}), [2, 3])
    await check(Filter(must={"scope": []}), [])
    await check(Filter(must={"workspace": None}), [0])
    # Scope visibility: global, or workspace w1, or project p1 in w1.
    vis = Filter(
        should=[
            {"scope": "global"},
            {"scope": "workspace", "workspace": "w1"},
            {"scope": "project", "workspace": "w1", "project": "p1"},
        ],
        must_not={"state": "archived"},
    )
    await check(vis, [0, 1])
    await check(
        Filter(
            should=[{"scope": "global"}, {"workspace": "w2"}], ranges={"created_ts": (150, None)}
        ),
        [2],
    )


async def test_dense_search_order_and_cosine(store: VectorStore) -> None:
    pts = [make_point("A") for _ in range(30)]
    await store.upsert(pts)
    q = rand_vec()
    res = await store.search("A", q, limit=5, with_vectors=True)
    expected = sorted(pts, key=lambda p: cosine(q, p.vector), reverse=True)[:5]
    assert [r.id for r in res] == [p.id for p in expected]
    for r, p in zip(res, expected, strict=True):
        assert r.score == pytest.approx(cosine(q, p.vector), abs=1e-4)
        assert r.vector is not None and len(r.vector) == DIM
    assert all(x.vector is None for x in await store.search("A", q, limit=3))
    # Unnormalised query vectors give the same cosine.
    scaled = [3.0 * x for x in q]
    res2 = await store.search("A", scaled, limit=5)
    assert [r.score for r in res2] == pytest.approx([r.score for r in res], abs=1e-4)


async def test_search_many_matches_single_searches(store: VectorStore) -> None:
    """A batch gives each query what its own search gives (filters, tenants, limits), in
    order; `fields` cuts the payloads down to those keys."""
    pts = [make_point("A", created_ts=float(i), user_id=f"u{i % 2}") for i in range(40)]
    pts += [make_point("B") for _ in range(5)]
    await store.upsert(pts)
    queries = [
        SearchQuery("A", rand_vec(), limit=5),
        SearchQuery("A", rand_vec(), limit=12, flt=Filter(ranges={"created_ts": (None, 20.0)})),
        SearchQuery("A", rand_vec(), limit=3, flt=Filter(must={"user_id": "u1"})),
        SearchQuery("B", rand_vec(), limit=10, with_vectors=True),
        SearchQuery("A", rand_vec(), limit=0),
    ]
    batch = await store.search_many(queries, fields=["created_ts", "user_id"])
    assert len(batch) == len(queries)
    for q, hits in zip(queries, batch, strict=True):
        alone = await store.search(
            q.tenant, q.vector, limit=q.limit, flt=q.flt, with_vectors=q.with_vectors
        )
        assert [h.id for h in hits] == [h.id for h in alone]
        assert [h.score for h in hits] == pytest.approx([h.score for h in alone], abs=1e-5)
        for h, a in zip(hits, alone, strict=True):
            assert h.payload == {k: a.payload[k] for k in ("created_ts", "user_id")}
            assert (h.vector is not None) == q.with_vectors
    assert len(batch[3]) == 5 and not batch[4]
    full = await store.search_many(queries[:1])
    assert full[0][0].payload.keys() == pts[0].payload.keys()
    assert await store.search_many([]) == []


async def test_search_many_leaves_out_hits_below_min_score(store: VectorStore) -> None:
    """`min_score` keeps exactly the hits a plain search gives at or above it, an equal
    score included."""
    pts = [make_point("A") for _ in range(30)]
    await store.upsert(pts)
    q = rand_vec()
    alone = await store.search("A", q, limit=30)
    cut = alone[9].score  # the 10th hit's own score: equal scores stay
    (kept,) = await store.search_many([SearchQuery("A", q, limit=30, min_score=cut)])
    assert [h.id for h in kept] == [h.id for h in alone if h.score >= cut]
    assert len(kept) >= 10
    (limited,) = await store.search_many([SearchQuery("A", q, limit=4, min_score=cut)])
    assert [h.id for h in limited] == [h.id for h in alone[:4]]
    (none,) = await store.search_many([SearchQuery("A", q, limit=5, min_score=1.01)])
    assert none == []


async def test_scroll_many_matches_single_scrolls(store: VectorStore) -> None:
    """A batch of scrolls gives each filter its own scroll's first page, in order (the
    recall's episode reads), and only the tenant's points."""
    pts = [make_point("A", episode=f"e{i % 3}", created_ts=float(i)) for i in range(30)]
    pts += [make_point("B", episode="e0") for _ in range(4)]
    await store.upsert(pts)
    filters = [
        Filter(must={"episode": "e0"}),
        Filter(must={"episode": "e1"}, ranges={"created_ts": (5.0, 20.0)}),
        Filter(must={"episode": "e2"}, must_not={"state": "active"}),
        Filter(must={"episode": ["e0", "e2"]}),
    ]
    batch = await store.scroll_many("A", filters, limit=8)
    assert len(batch) == len(filters)
    for flt, page in zip(filters, batch, strict=True):
        alone, _ = await store.scroll("A", flt=flt, limit=8)
        assert [p.id for p in page] == [p.id for p in alone]
        assert [p.payload for p in page] == [p.payload for p in alone]
        assert all(p.vector is None and p.payload["tenant"] == "A" for p in page)
    assert [len(p) for p in batch] == [8, 5, 0, 8]
    assert await store.scroll_many("A", [], limit=8) == []


async def test_reads_return_only_the_asked_fields(store: VectorStore) -> None:
    """`fields` on every read: only those payload fields come back, an empty list none (ids
    and scores only, as the sweeper's neighbour search asks), and the same points with the
    same scores as a read of whole payloads; `get` still reads only the tenant's points."""
    pts = [
        make_point("A", f"note about topic {i}", episode="e1", created_ts=float(i))
        for i in range(8)
    ]
    other = make_point("B", "note about topic", episode="e1")
    await store.upsert([*pts, other])
    payload_of = {p.id: p.payload for p in pts}
    q = rand_vec()
    ids = [p.id for p in pts[:5]] + [other.id]
    episode = Filter(must={"episode": "e1"})
    whole_get = await store.get("A", ids)
    whole_search = await store.search("A", q, limit=5)
    # All 8: fused scores tie often, and the engine orders ties as it likes.
    whole_hybrid = await store.search("A", q, limit=8, sparse=encode_query("topic"))
    whole_batch = await store.search_many([SearchQuery("A", q, limit=5)])
    whole_scroll, _ = await store.scroll("A", flt=episode, limit=6)
    whole_pages = await store.scroll_many("A", [episode], limit=6)
    for fields in ([], ["created_ts"], ["created_ts", "tenant", "missing"]):

        def want(pid: str, fields: list[str] = fields) -> dict[str, Any]:
            return {k: payload_of[pid][k] for k in fields if k in payload_of[pid]}

        got = await store.get("A", ids, fields=fields)
        assert sorted(g.id for g in got) == sorted(g.id for g in whole_get)
        assert all(g.payload == want(g.id) for g in got)
        for whole, cut in (
            (whole_search, await store.search("A", q, limit=5, fields=fields)),
            (
                whole_hybrid,
                await store.search("A", q, limit=8, sparse=encode_query("topic"), fields=fields),
            ),
            (whole_batch[0], (await store.search_many([SearchQuery("A", q, 5)], fields=fields))[0]),
        ):
            # Scores within 1e-6: the in-memory server computes a cosine in float32 along
            # more than one path, and the last bits differed between two reads (1 in ~20).
            hits = [(h.id, h.score, h.fused) for h in cut]
            ref = {h.id: (h.score, h.fused) for h in whole}
            assert sorted(i for i, _, _ in hits) == sorted(ref)
            assert all(abs(sc - ref[i][0]) < 1e-6 and fu == ref[i][1] for i, sc, fu in hits)
            assert hits == sorted(hits, key=lambda h: -(h[2] if h[2] is not None else h[1]))
            assert all(h.payload == want(h.id) for h in cut)
        page, _ = await store.scroll("A", flt=episode, limit=6, fields=fields)
        (batch_page,) = await store.scroll_many("A", [episode], limit=6, fields=fields)
        for whole_page, cut_page in ((whole_scroll, page), (whole_pages[0], batch_page)):
            assert [p.id for p in cut_page] == [p.id for p in whole_page]
            assert all(p.payload == want(p.id) for p in cut_page)
    assert all(len(g.payload) > 3 for g in await store.get("A", ids, fields=None))


async def test_hybrid_returns_vectors_when_asked(store: VectorStore) -> None:
    q = rand_vec()
    pts = [make_point("A", f"note about topic {i}") for i in range(5)]
    await store.upsert(pts)
    hits = await store.search("A", q, limit=5, sparse=encode_query("topic"), with_vectors=True)
    assert hits and all(h.fused is not None for h in hits)
    for h in hits:
        src = next(p for p in pts if p.id == h.id)
        assert h.vector is not None and h.vector == pytest.approx(src.vector, abs=1e-5)
        assert h.score == pytest.approx(cosine(q, src.vector), abs=1e-4)


async def test_hybrid_finds_lexical_only_match(store: VectorStore) -> None:
    q = rand_vec()
    texts = [
        "lunch with the team at the cafe",
        "quarterly budget review notes",
        "deploy the service to staging",
        "weekly sync about hiring plans",
        "notes on the database migration",
        "meeting notes from planning",
    ]
    # Distractors are close to the query in dense space; the rare name is far from it.
    near = [
        make_point("A", t, vector=unit(np.asarray(q) + 0.3 * RNG.standard_normal(DIM)))
        for t in texts
    ]
    rare = make_point(
        "A",
        "call with Quillinan about the contract",
        vector=unit(-np.asarray(q) + 0.1 * RNG.standard_normal(DIM)),
    )
    other_tenant = make_point("B", "Quillinan contract", vector=q)
    await store.upsert([*near, rare, other_tenant])

    dense = await store.search("A", q, limit=3)
    assert rare.id not in {x.id for x in dense}

    hybrid = await store.search("A", q, limit=3, sparse=encode_query("what did Quillinan say"))
    ids = [x.id for x in hybrid]
    assert rare.id in ids
    assert other_tenant.id not in ids
    for x in hybrid:
        src = next(p for p in [*near, rare] if p.id == x.id)
        assert x.score == pytest.approx(cosine(q, src.vector), abs=1e-4)
        assert x.vector is None
    assert next(x for x in hybrid if x.id == rare.id).score < 0
    # Both adapters keep the fusion score, in fused order (recall ranks by it).
    fused = [x.fused for x in hybrid]
    assert all(f is not None and f > 0 for f in fused)
    assert fused == sorted(fused, reverse=True)
    assert all(x.fused is None for x in dense)

    # A query with no known term adds nothing, and an empty sparse vector means dense only.
    empty = await store.search("A", q, limit=3, sparse=encode_query("the of and"))
    assert [x.id for x in empty] == [x.id for x in dense]


async def test_concurrent_calls(store: VectorStore) -> None:
    await store.upsert([make_point("A", f"note {i}") for i in range(50)])

    async def writer(i: int) -> None:
        await store.upsert([make_point("A", f"more {i}")])

    async def reader() -> int:
        return len(await store.search("A", rand_vec(), limit=5, sparse=encode_query("note")))

    results = await asyncio.gather(*[reader() for _ in range(40)], *[writer(i) for i in range(10)])
    assert all(r == 5 for r in results[:40])
    assert await store.count("A") == 60


async def test_edge_persistence_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "shard"
    s1 = EdgeVectorStore(path, dim=DIM)
    await s1.ensure_collection()
    keep, gone = make_point("A", "persistent Quillinan note"), make_point("A")
    await s1.upsert([keep, gone])
    assert await s1.set_payload("A", keep.id, {"pinned": True})
    assert await s1.delete("A", [gone.id]) == 1

    # One holder at a time: the WAL is locked while s1 is open.
    s_busy = EdgeVectorStore(path, dim=DIM)
    with pytest.raises(Exception, match="WAL"):
        await s_busy.ensure_collection()
    await s1.close()
    with pytest.raises(RuntimeError):
        await s1.count("A")

    s2 = EdgeVectorStore(path, dim=DIM)
    await s2.ensure_collection()
    try:
        got = await s2.get("A", [keep.id, gone.id], with_vectors=True)
        assert [g.id for g in got] == [keep.id]
        assert got[0].payload["pinned"] is True
        assert got[0].vector is not None
        assert cosine(got[0].vector, keep.vector) == pytest.approx(1.0)
        assert await s2.count("A", Filter(must={"pinned": True})) == 1
        hybrid = await s2.search("A", rand_vec(), limit=1, sparse=encode_query("Quillinan"))
        assert [x.id for x in hybrid] == [keep.id]
        assert s2._shard is not None
        schema = s2._shard.info().payload_schema
        assert {"tenant", "graph.extracted", "created_ts", "strength.s_ref"} <= set(schema)
    finally:
        await s2.close()

    with pytest.raises(Exception, match="size"):
        await EdgeVectorStore(path, dim=DIM * 2).ensure_collection()


async def test_edge_background_optimize(tmp_path: Path) -> None:
    s = EdgeVectorStore(tmp_path / "shard", dim=DIM, optimize_after=100)
    await s.ensure_collection()
    try:
        await s.upsert([make_point("A") for _ in range(150)])
        assert await s.optimize() in (True, False)
        assert await s.count("A") == 150
    finally:
        await s.close()


async def test_the_first_embedding_model_claimed_stays_the_stores(store: VectorStore) -> None:
    assert await store.embedding_model() is None
    assert await store.claim_embedding_model("pcm-local/minilm-q8") is None
    assert await store.embedding_model() == "pcm-local/minilm-q8"
    assert await store.claim_embedding_model("pcm-local/minilm-q8") == "pcm-local/minilm-q8"
    # Another model does not replace it: the caller learns which one the vectors are of.
    assert await store.claim_embedding_model("openai/text-embedding-3-small") == (
        "pcm-local/minilm-q8"
    )


async def test_edge_keeps_its_embedding_model_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "shard"
    s1 = EdgeVectorStore(path, dim=DIM)
    await s1.upsert([make_point("A")])
    # A shard written before models were recorded takes the configured one.
    assert await s1.claim_embedding_model("model-a") is None
    await s1.close()
    s2 = EdgeVectorStore(path, dim=DIM)
    try:
        assert await s2.claim_embedding_model("model-b") == "model-a"
        assert await s2.count("A") == 1
    finally:
        await s2.close()


async def test_edge_indexes_a_segment_only_past_the_indexing_threshold(tmp_path: Path) -> None:
    # 16-d float32 vectors are 64 bytes: 2 KB holds 32 of them.
    s = EdgeVectorStore(tmp_path / "shard", dim=DIM, indexing_threshold_kb=2, optimize_after=10**9)
    try:
        await s.upsert([make_point("A") for _ in range(20)])
        await s.optimize()
        assert s._shard is not None and s._shard.info().indexed_vectors_count == 0
        await s.upsert([make_point("A") for _ in range(60)])
        await s.optimize()
        assert s._shard.info().indexed_vectors_count == 80
        assert await s.count("A") == 80
    finally:
        await s.close()


async def test_sample_reads_texts_and_vectors_of_any_tenant(store: VectorStore) -> None:
    points = [make_point(t, f"note of {t}") for t in ("A", "B", "C")]
    await store.upsert(points)
    got = {p.id: p for p in await store.sample(10)}
    assert set(got) == {p.id for p in points}
    for p in points:
        assert got[p.id].payload["text"] == p.payload["text"]
        assert "tenant" not in got[p.id].payload
        assert cosine(got[p.id].vector or [], p.vector) == pytest.approx(1.0, abs=1e-5)
    assert len(await store.sample(2)) == 2
