"""The Edge adapter's payload cache never changes what a read returns.

A cached store and an uncached one get the same random writes and reads and must answer
alike (a search's payloads must be its engine's); under concurrent writes and reads, every
payload left in the cache must equal the engine's."""

from __future__ import annotations

import asyncio
import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from pcm_common.models.sparse import encode_document, encode_query
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import ScoredPoint, VectorPoint

DIM = 8


def _vec(rng: random.Random) -> list[float]:
    v = np.array([rng.gauss(0, 1) for _ in range(DIM)])
    return (v / np.linalg.norm(v)).tolist()


def _point(rng: random.Random, pid: str, tenant: str) -> VectorPoint:
    text = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "kafka"]) for _ in range(4))
    payload: dict[str, Any] = {
        "tenant": tenant,
        "text": text,
        "state": rng.choice(["active", "archived"]),
        "strength": {"s_ref": rng.random(), "n": rng.randint(0, 5), "last": None},
        "figures": tuple(str(rng.randint(1, 99)) for _ in range(2)),
        "user_id": None,
        "metadata": {"nested": {"list": [1, 2.5, "x"]}},
    }
    return VectorPoint(id=pid, vector=_vec(rng), payload=payload, sparse=encode_document(text))


def _patch(rng: random.Random) -> dict[str, Any]:
    return rng.choice(
        [
            {"strength": {"s_ref": rng.random(), "n": rng.randint(0, 9), "last": None}},
            {"state": "archived", "graph": {"extracted": True}},
            {"metadata": None},  # removes the key, as Qdrant's set_payload does
            {"figures": ["1", "2"], "extra": rng.randint(0, 3)},
        ]
    )


def _engine(store: EdgeVectorStore, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The payloads of `ids` as the engine has them, past the cache."""
    return store._read(
        lambda s: {
            str(r.id): dict(r.payload or {})
            for r in s.retrieve(ids, with_payload=True, with_vector=False)
        },
        "test",
    )


def _view(points: list[ScoredPoint]) -> list[tuple[str, dict[str, Any], float, float | None]]:
    return [(p.id, p.payload, round(p.score, 5), p.fused) for p in points]


async def test_cached_and_uncached_stores_answer_alike(tmp_path: Path) -> None:
    rng = random.Random(11)
    cached = EdgeVectorStore(tmp_path / "cached", dim=DIM, payload_cache=15)
    plain = EdgeVectorStore(tmp_path / "plain", dim=DIM)
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(40)]
    try:
        for step in range(400):
            op = rng.random()
            pick = rng.sample(ids, rng.randint(1, 6))
            tenant = rng.choice(["A", "A", "B"])
            if op < 0.25:
                points = [_point(rng, i, tenant) for i in pick]
                for s in (cached, plain):
                    await s.upsert(points)
            elif op < 0.45:
                patches = [(i, _patch(rng)) for i in pick]
                results = [await s.set_payload_many(tenant, patches) for s in (cached, plain)]
                assert results[0] == results[1], step
            elif op < 0.5:
                counts = [await s.delete(tenant, pick[:2]) for s in (cached, plain)]
                assert counts[0] == counts[1], step
            elif op < 0.75:
                fields = rng.choice([None, ("text",), ("strength", "state")])
                vectors = rng.random() < 0.3
                got = [
                    await s.get(tenant, pick, with_vectors=vectors, fields=fields)
                    for s in (cached, plain)
                ]
                assert _view(got[0]) == _view(got[1]), step
                assert [p.vector for p in got[0]] == [p.vector for p in got[1]], step
            else:
                # Two shards may order tied fused scores differently: the search is checked
                # against its own shard's engine instead.
                q = _vec(rng)
                sparse = encode_query("kafka beta") if rng.random() < 0.5 else None
                fields = rng.choice([None, ("text",)])
                hits = await cached.search(tenant, q, limit=8, sparse=sparse, fields=fields)
                truth = _engine(cached, [h.id for h in hits])
                assert [h.payload for h in hits] == [
                    truth[h.id] if fields is None else {"text": truth[h.id]["text"]} for h in hits
                ], step
                assert {h.payload.get("tenant", tenant) for h in hits} <= {tenant}
        assert cached._cache.hits > 0 and cached._cache.misses > 0
    finally:
        await cached.close()
        await plain.close()


async def test_concurrent_writes_leave_the_cache_equal_to_the_engine(tmp_path: Path) -> None:
    rng = random.Random(5)
    store = EdgeVectorStore(tmp_path / "shard", dim=DIM, payload_cache=1000)
    ids = [str(uuid.uuid4()) for _ in range(30)]
    await store.upsert([_point(rng, i, "A") for i in ids])

    writers_done = asyncio.Event()

    async def writer(n: int) -> None:
        for _ in range(15):
            pick = rng.sample(ids, 5)
            await store.set_payload_many("A", [(i, _patch(rng)) for i in pick])
            if n == 0:
                await store.upsert([_point(rng, rng.choice(ids), "A")])

    async def writers() -> None:
        await asyncio.gather(*(writer(n) for n in range(3)))
        writers_done.set()

    async def reader() -> None:
        # At least 15 rounds, and one begun after the last write: otherwise the writes
        # can happen to drop every entry last, and the check below has nothing to check.
        rounds = 0
        while True:
            after_writes = writers_done.is_set()
            await store.get("A", rng.sample(ids, 10))
            await store.search("A", _vec(rng), limit=10, sparse=encode_query("alpha"))
            rounds += 1
            if after_writes and rounds >= 15:
                return

    try:
        await asyncio.gather(writers(), *(reader() for _ in range(4)))
        entries = dict(store._cache._entries)
        assert entries  # the reads filled it
        truth = _engine(store, list(entries))
        # Each entry holds the engine's payload, or the fields of it that its read asked for.
        assert {i: payload for i, (payload, _) in entries.items()} == {
            i: truth[i] if held is None else {k: truth[i][k] for k in held if k in truth[i]}
            for i, (_, held) in entries.items()
        }
    finally:
        await store.close()
