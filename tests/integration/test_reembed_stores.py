"""The re-embedding port on both Qdrant adapters (a store beside, replaced where it stands,
every tenant's points read in pages), and the job stopped halfway and continued by another
run, as a restarted process does (`pcm_common.data.reembed`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from pcm_common.data.reembed import Reembedding
from pcm_common.models.embeddings import Embedder
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.qdrant.server import ServerVectorStore
from pcm_common.stores.redis import keys
from pcm_common.stores.vectors import ScoredPoint, VectorPoint, VectorStore
from tests.conftest import TEST_REDIS

FROM_MODEL = "pcm-local/minilm"
TO_MODEL = "pcm-local/minilm-q8t"
GOODS = "copper timber glass cotton salt coffee steel paper".split() * 5
TEXTS = [f"Note {i}: the {w} shipment arrives on dock {i % 7}." for i, w in enumerate(GOODS)]


def _point(tenant: str, text: str, vector: list[float]) -> VectorPoint:
    return VectorPoint(str(uuid.uuid4()), vector, {"tenant": tenant, "text": text})


@pytest.fixture(params=["edge", "server"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    s: VectorStore = (
        EdgeVectorStore(tmp_path / "shard", dim=4)
        if request.param == "edge"
        else ServerVectorStore(collection=f"t{uuid.uuid4().hex[:8]}", dim=4, location=":memory:")
    )
    await s.ensure_collection()
    yield s
    await s.close()


async def test_a_store_beside_replaces_the_store_where_it_stands(store: VectorStore) -> None:
    old = [_point(t, f"{t} {i}", [1.0, 0.0, 0.0, 0.0]) for t in ("a", "b") for i in range(5)]
    await store.upsert(old)
    seen: list[str] = []
    offset: str | None = None
    while True:
        page, offset = await store.scroll_all(limit=3, offset=offset)
        assert all(p.payload["text"] and p.vector is None for p in page)
        seen += [p.id for p in page]
        if offset is None:
            break
    assert sorted(seen) == sorted(p.id for p in old)  # every tenant's, once

    for round_ in range(2):  # the second time, from a store already moved once
        side = store.beside(f"next{round_}", 6)
        await side.ensure_collection()
        await side.claim_embedding_model(f"model-{round_}")
        kept = old[:4]
        await side.upsert([VectorPoint(p.id, [0.0] * 5 + [1.0], p.payload) for p in kept])
        await store.replace_with(side)
        got = await store.get("a", [p.id for p in old], with_vectors=True)
        assert sorted(p.id for p in got) == sorted(p.id for p in kept)
        assert all(len(p.vector or []) == 6 for p in got)
        assert await store.embedding_model() == f"model-{round_}"
        hits = await store.search("a", [0.0] * 5 + [1.0], limit=10)
        assert {h.id for h in hits} == {p.id for p in kept} and hits[0].score > 0.99
        await store.upsert([VectorPoint(old[5].id, [0.0] * 5 + [1.0], old[5].payload)])
        assert await store.count("b") == 1
        await store.delete("b", [old[5].id])

    dropped = store.beside("given-up", 4)
    await dropped.ensure_collection()
    await dropped.upsert([_point("a", "x", [1.0, 0.0, 0.0, 0.0])])
    await dropped.drop()
    assert await store.count("a") == 4


async def test_a_stopped_job_continues_from_its_checkpoint(tmp_path: Path) -> None:
    redis_url = f"{TEST_REDIS}/13"
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    settings = PcmSettings(
        redis_url=redis_url, qdrant_path=tmp_path / "shard", embedding_model=FROM_MODEL
    )
    first = Resources(settings)
    vecs = await Embedder(FROM_MODEL).embed(TEXTS)
    points = [_point("t", text, v) for text, v in zip(TEXTS, vecs, strict=True)]
    await first.vectors.upsert(points)
    await first.open_vectors()
    await redis.sadd(keys.TENANTS, "t")

    # The store goes away after two pages (as a crash would stop the job there).
    adapter = first.dual_writes.inner
    real_scroll = adapter.scroll_all
    calls = 0

    async def failing(**kw: Any) -> tuple[list[ScoredPoint], str | None]:
        nonlocal calls
        calls += 1
        if calls > 2:
            raise RuntimeError("store gone")
        return await real_scroll(**kw)

    adapter.scroll_all = failing  # type: ignore[method-assign]
    job = Reembedding(first, page=8)
    await job.start(TO_MODEL)
    await job.wait()
    await job.stop()
    rec = await job.record()
    assert rec["status"] == "running" and "store gone" in rec["error"], rec
    assert rec["done"] == "16" and rec["offset"], rec  # the checkpoint after two pages
    adapter.scroll_all = real_scroll  # type: ignore[method-assign]
    # A write while no job ran is caught by the check before the switch.
    late = _point("t", "A late note about the zinc shipment.", vecs[0])
    await first.vectors.upsert([late])
    deleted = points[-1].id
    await first.vectors.delete("t", [deleted])
    await first.aclose()

    again = Resources(settings.model_copy())
    try:
        await again.open_vectors()
        job = Reembedding(again, page=8)
        assert await job.resume()
        await job.wait()
        status = await job.status()
        assert status["status"] == "done" and status["resumed"] == 1, status
        assert status["store_model"] == TO_MODEL
        assert again.settings.embedding_model == TO_MODEL
        ids = [p.id for p in points if p.id != deleted] + [late.id]
        got = await again.vectors.get("t", [*ids, deleted], with_vectors=True)
        assert sorted(p.id for p in got) == sorted(ids)
        want = await Embedder(TO_MODEL).embed([str(p.payload["text"]) for p in got])
        for p, v in zip(got, want, strict=True):
            assert sum(a * b for a, b in zip(p.vector or [], v, strict=True)) > 0.9999
    finally:
        await again.aclose()

    # The service restarted with the model it was configured with before: it takes the
    # store's, which the job moved.
    third = Resources(PcmSettings(**{**settings.model_dump(), "embedding_model": FROM_MODEL}))
    try:
        await third.open_vectors()
        assert third.settings.embedding_model == TO_MODEL
    finally:
        await third.aclose()
        await redis.flushdb()
        await redis.aclose()


async def test_writes_during_the_switch_reach_the_new_store(tmp_path: Path) -> None:
    """A payload change and a new memory written while the stores change places are in
    the store the job switched to: dual writes stay on until the swap is made, so a write
    then waits for it instead of landing in the old store, which goes (the PATCH the
    end-to-end test once lost: 200, then `pinned` false after the switch). A memory
    embedded with the old model and written just after the switch gets the new one's
    vector."""
    redis_url = f"{TEST_REDIS}/13"
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    settings = PcmSettings(
        redis_url=redis_url, qdrant_path=tmp_path / "shard", embedding_model=FROM_MODEL
    )
    res = Resources(settings)
    try:
        await res.open_vectors()
        vecs = await Embedder(FROM_MODEL).embed(TEXTS)
        points = [_point("t", text, v) for text, v in zip(TEXTS, vecs, strict=True)]
        await res.vectors.upsert(points)
        await redis.sadd(keys.TENANTS, "t")
        target = points[3].id
        late_text = "A late note: the zinc shipment arrives on dock 2."
        late = _point("t", late_text, (await Embedder(FROM_MODEL).embed([late_text]))[0])

        # The writes start as the switch does, and go as far as they can (a second) before
        # the stores change places.
        adapter = res.dual_writes.inner
        real_replace = adapter.replace_with
        writes: list[asyncio.Task[Any]] = []

        async def replace_with(other: VectorStore) -> None:
            writes.append(
                asyncio.create_task(res.vectors.set_payload("t", target, {"pinned": True}))
            )
            writes.append(asyncio.create_task(res.vectors.upsert([late])))
            await asyncio.wait(writes, timeout=1.0)
            await real_replace(other)

        adapter.replace_with = replace_with  # type: ignore[method-assign]
        job = Reembedding(res, page=16)
        await job.start(TO_MODEL)
        await job.wait()
        assert (await job.status())["status"] == "done"
        assert writes and (await writes[0]) is True
        await writes[1]

        got = await res.vectors.get("t", [target, late.id], with_vectors=True)
        by_id = {p.id: p for p in got}
        assert by_id[target].payload.get("pinned") is True, by_id[target].payload
        assert late.id in by_id, "a memory written during the switch was lost"
        # ... with the new model's vector: the adapter holds the new store now.
        want = (await Embedder(TO_MODEL).embed([late_text]))[0]
        dot = sum(a * b for a, b in zip(by_id[late.id].vector or [], want, strict=True))
        assert dot > 0.9999, dot

        # A writer that embedded before the switch and upserts after it: the point is
        # embedded again with the new model (`AFTER_SWITCH_S`).
        later_text = "A later note: the tin shipment arrives on dock 5."
        old_vec = (await Embedder(FROM_MODEL).embed([later_text]))[0]
        new_vec = (await Embedder(TO_MODEL).embed([later_text]))[0]
        assert sum(a * b for a, b in zip(old_vec, new_vec, strict=True)) < 0.9999
        later = _point("t", later_text, old_vec)
        await res.vectors.upsert([later])
        (got_later,) = await res.vectors.get("t", [later.id], with_vectors=True)
        dot = sum(a * b for a, b in zip(got_later.vector or [], new_vec, strict=True))
        assert dot > 0.9999, dot
    finally:
        await res.aclose()
        await redis.flushdb()
        await redis.aclose()
