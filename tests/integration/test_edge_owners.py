"""The Edge adapter's record of who owns each point (`pcm_common.stores.qdrant.edge.owners`) answers
ownership checks as the engine would, and spares the engine the question.

Stores with the record (full, and of 3 entries, which keeps starting again) and one
without it get the same random upserts (a point may be written again for another tenant),
payload writes and deletes by random tenants, and a reopen half way; every call must
answer alike and leave the same points with the same payloads."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import qdrant_edge as qe

from pcm_common.stores.qdrant.edge.owners import Owners
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import VectorPoint

DIM = 8
TENANTS = ("A", "B", "C")


def _point(rng: random.Random, pid: str, tenant: str) -> VectorPoint:
    v = np.array([rng.gauss(0, 1) for _ in range(DIM)])
    payload: dict[str, Any] = {"tenant": tenant, "text": f"t{rng.randint(0, 9)}", "n": 0}
    return VectorPoint(id=pid, vector=(v / np.linalg.norm(v)).tolist(), payload=payload)


def _open(path: Path, capacity: int | None) -> EdgeVectorStore:
    store = EdgeVectorStore(path, dim=DIM)
    if capacity is not None:
        store._owners = Owners(capacity)
    return store


def _everything(store: EdgeVectorStore) -> dict[str, dict[str, Any]]:
    records, _ = store._read(
        lambda s: s.scroll(qe.ScrollRequest(limit=1000, with_payload=True, with_vector=False)),
        "test",
    )
    return {str(r.id): dict(r.payload or {}) for r in records}


async def test_ownership_answers_match_the_engines(tmp_path: Path) -> None:
    rng = random.Random(11)
    capacities: dict[str, int | None] = {"engine": 0, "record": None, "record-3": 3}
    stores = {name: _open(tmp_path / name, cap) for name, cap in capacities.items()}
    for s in stores.values():
        await s.ensure_collection()
    ids = [str(uuid.uuid4()) for _ in range(12)]
    try:
        for step in range(400):
            if step == 200:  # a new adapter on the same shards starts with an empty record
                for name, s in list(stores.items()):
                    await s.close()
                    stores[name] = _open(tmp_path / name, capacities[name])
            op = rng.random()
            tenant = rng.choice(TENANTS)
            picked = rng.sample(ids, rng.randint(1, 4))
            if rng.random() < 0.1:
                picked.append("not-a-uuid")
            answers: list[Any] = []
            if op < 0.3:
                points = [_point(random.Random(step), i, tenant) for i in picked if i in ids]
                for s in stores.values():
                    await s.upsert(points)
                    answers.append(sorted(p.id for p in await s.get(tenant, picked)))
            elif op < 0.8:
                patches = [(i, {"n": step}) for i in picked]
                for s in stores.values():
                    answers.append(await s.set_payload_many(tenant, patches))
            elif op < 0.95:
                for s in stores.values():
                    answers.append(await s.delete(tenant, picked))
            else:
                for s in stores.values():
                    answers.append(sorted(p.id for p in await s.get(tenant, picked)))
            assert all(a == answers[0] for a in answers), (step, op, answers)
        contents = [_everything(s) for s in stores.values()]
        assert contents[0] and all(c == contents[0] for c in contents)
    finally:
        for s in stores.values():
            await s.close()


async def test_known_points_need_no_engine_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scrolls: list[Any] = []
    real = qe.ScrollRequest

    def counted(*args: Any, **kwargs: Any) -> Any:
        scrolls.append(kwargs)
        return real(*args, **kwargs)

    rng = random.Random(3)
    store = EdgeVectorStore(tmp_path / "shard", dim=DIM)
    await store.ensure_collection()
    mine = _point(rng, str(uuid.uuid4()), "A")
    await store.upsert([mine])
    await store.close()

    monkeypatch.setattr(qe, "ScrollRequest", counted)
    store = EdgeVectorStore(tmp_path / "shard", dim=DIM)
    try:
        # Written before this adapter opened the shard: asked of the engine once.
        assert await store.set_payload("A", mine.id, {"n": 1})
        assert len(scrolls) == 1
        assert await store.set_payload("A", mine.id, {"n": 2})
        assert not await store.set_payload("B", mine.id, {"n": 3})
        fresh = _point(rng, str(uuid.uuid4()), "B")
        await store.upsert([fresh])
        assert await store.set_payload("B", fresh.id, {"n": 4})
        assert not await store.set_payload("A", fresh.id, {"n": 5})
        assert await store.delete("B", [fresh.id]) == 1
        assert len(scrolls) == 1
        # Deleted: unknown again, so the engine is asked, and it has no such point.
        assert not await store.set_payload("B", fresh.id, {"n": 6})
        assert len(scrolls) == 2
        assert [p.payload["n"] for p in await store.get("A", [mine.id])] == [2]
    finally:
        await store.close()
