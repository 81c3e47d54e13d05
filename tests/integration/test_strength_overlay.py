"""The strength overlay (`StrengthOverlayStore`) on a real Qdrant Edge shard and real Redis
(DB 13): whatever it holds in Redis, its reads answer as a store that writes strengths into
the payloads does; it never lets one tenant's write or read reach another's; the fold moves
what it holds into the payloads without losing an update that races it."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from pcm_common.models.sparse import encode_document, encode_query
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.redis.strength_overlay import StrengthOverlayStore
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery, VectorPoint
from tests.conftest import TEST_REDIS

DIM = 8
WORDS = ["alpha", "beta", "gamma", "delta", "kafka"]


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    r = Redis.from_url(f"{TEST_REDIS}/13")
    yield r
    async for key in r.scan_iter(match="test:overlay:*"):
        await r.delete(key)
    await r.aclose()


def _overlay(path: Path, redis: Redis) -> StrengthOverlayStore:
    return StrengthOverlayStore(
        EdgeVectorStore(path, dim=DIM), redis, prefix=f"test:overlay:{uuid.uuid4().hex}:"
    )


def _vec(rng: random.Random) -> list[float]:
    v = np.array([rng.gauss(0, 1) for _ in range(DIM)])
    return (v / np.linalg.norm(v)).tolist()


def _strength(rng: random.Random) -> dict[str, Any]:
    return {"s_ref": rng.random(), "t_ref": "2024-01-01T00:00:00Z", "n": rng.randint(0, 9)}


def _point(rng: random.Random, pid: str, tenant: str) -> VectorPoint:
    text = " ".join(rng.choice(WORDS) for _ in range(4))
    payload = {
        "tenant": tenant,
        "text": text,
        "state": rng.choice(["active", "archived"]),
        "strength": _strength(rng),
    }
    return VectorPoint(id=pid, vector=_vec(rng), payload=payload, sparse=encode_document(text))


def _patch(rng: random.Random) -> dict[str, Any]:
    return rng.choice(
        [
            {"strength": _strength(rng)},
            {"strength": _strength(rng), "state": "active"},  # a reactivation
            {"state": "archived"},
            {"strength": _strength(rng), "tenant": "a"},
        ]
    )


def _rounded(value: Any) -> Any:
    """The engine returns some floats one unit in the last place off what was written."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _view(points: list[ScoredPoint]) -> list[tuple[str, Any, float]]:
    return [(p.id, _rounded(p.payload), round(p.score, 5)) for p in points]


async def _reads(store: Any, rng: random.Random, ids: list[str]) -> list[Any]:
    """One of each read, for tenant "a" (and a search of "b" in the batch)."""
    some = [*rng.sample(ids, 5), "not-a-uuid"]
    q = " ".join(rng.choice(WORDS) for _ in range(2))
    vec = _vec(rng)
    flt = Filter(must={"state": "active"})
    page, _ = await store.scroll("a", limit=100)
    return [
        _view(await store.get("a", some)),
        _view(await store.get("a", some, fields=("strength",))),
        _view(await store.get("a", some, fields=())),
        # Every point of "a", by id: the fused order depends on the shard's layout (the
        # engine's lexical statistics count points a payload write moved twice).
        sorted(_view(await store.search("a", vec, limit=40, sparse=encode_query(q), prefetch=40))),
        _view(await store.search("a", vec, limit=10, flt=flt)),
        _view(sorted(page, key=lambda p: p.id)),
        [_view(x) for x in await store.scroll_many("a", [flt, Filter()], limit=50)],
        [
            _view(x)
            for x in await store.search_many(
                [SearchQuery("a", vec, limit=5), SearchQuery("b", vec, limit=5)]
            )
        ],
    ]


async def test_reads_answer_as_with_strengths_in_the_payloads(tmp_path: Path, redis: Redis) -> None:
    rng = random.Random(5)
    overlay = _overlay(tmp_path / "overlay", redis)
    plain = EdgeVectorStore(tmp_path / "plain", dim=DIM)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(40)]
    for store in (overlay, plain):
        r = random.Random(1)
        await store.upsert([_point(r, pid, "a" if i < 30 else "b") for i, pid in enumerate(ids)])
    for step in range(120):
        op = rng.random()
        if op < 0.55:
            patches = [(rng.choice(ids), _patch(rng)) for _ in range(rng.randint(1, 12))]
            tenant = rng.choice(["a", "a", "b"])
            if tenant == "b":
                patches = [(i, {k: v for k, v in p.items() if k != "tenant"}) for i, p in patches]
            want = await plain.set_payload_many(tenant, patches)
            assert await overlay.set_payload_many(tenant, patches) == want
        elif op < 0.65:
            r = random.Random(step)
            points = [_point(r, rng.choice(ids[:30]), "a") for _ in range(2)]
            for store in (overlay, plain):
                await store.upsert(points)
        elif op < 0.72:
            gone = rng.sample(ids[:30], 2)
            assert await overlay.delete("a", gone) == await plain.delete("a", gone)
        elif op < 0.8:
            await overlay.fold_strengths(rng.choice(["a", "b"]))
        seed = rng.random()
        got = await _reads(overlay, random.Random(seed), ids)
        assert got == await _reads(plain, random.Random(seed), ids), f"step {step}"
    assert await overlay.fold_strengths("a") >= 0
    assert await overlay.fold_strengths("b") >= 0
    # Folded: the shard itself now holds what the plain store holds.
    for tenant in ("a", "b"):
        assert not await redis.hlen(overlay._key(tenant))
        raw = sorted((await overlay.inner.scroll(tenant, limit=100))[0], key=lambda p: p.id)
        want = sorted((await plain.scroll(tenant, limit=100))[0], key=lambda p: p.id)
        assert _view(raw) == _view(want)
    await overlay.close()
    await plain.close()


async def test_a_tenant_never_writes_or_reads_another_tenants_strength(
    tmp_path: Path, redis: Redis
) -> None:
    rng = random.Random(2)
    store = _overlay(tmp_path / "s", redis)
    mine, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    await store.upsert([_point(rng, mine, "a"), _point(rng, theirs, "b")])
    before = (await store.get("b", [theirs]))[0].payload["strength"]
    new = {"s_ref": 0.99, "t_ref": "2024-02-01T00:00:00Z", "n": 3}
    assert await store.set_payload_many("a", [(theirs, {"strength": new}), (mine, {})]) == [
        False,
        True,
    ]
    assert not await redis.hlen(store._key("b"))
    assert not await redis.hexists(store._key("a"), theirs)
    assert (await store.get("b", [theirs]))[0].payload["strength"] == before
    assert await store.get("a", [theirs]) == []
    with pytest.raises(ValueError):
        await store.set_payload_many("a", [(mine, {"strength": new, "tenant": "b"})])
    # An entry planted under the wrong tenant's hash is never read for the other tenant.
    await redis.hset(store._key("a"), theirs, '{"s_ref": 0.5}')
    assert (await store.get("b", [theirs]))[0].payload["strength"] == before
    await store.close()


async def test_strength_goes_to_redis_and_the_rest_to_the_payload(
    tmp_path: Path, redis: Redis
) -> None:
    rng = random.Random(3)
    store = _overlay(tmp_path / "s", redis)
    pid = str(uuid.uuid4())
    await store.upsert([_point(rng, pid, "a")])
    stored = (await store.inner.get("a", [pid]))[0].payload["strength"]
    new = {"s_ref": 0.7, "t_ref": "2024-03-01T00:00:00Z", "n": 1}
    assert await store.set_payload("a", pid, {"strength": new, "state": "active"})
    raw = (await store.inner.get("a", [pid]))[0].payload
    assert raw["state"] == "active" and raw["strength"] == stored  # the payload's untouched
    assert (await store.get("a", [pid]))[0].payload["strength"] == new
    # An upsert is the point's whole state: its entry goes.
    await store.upsert([_point(rng, pid, "a")])
    assert not await redis.hexists(store._key("a"), pid)
    assert await store.set_payload("a", pid, {"strength": new})
    assert await store.delete("a", [pid]) == 1
    assert not await redis.hlen(store._key("a"))
    await store.close()


async def test_an_update_racing_the_fold_is_kept(tmp_path: Path, redis: Redis) -> None:
    rng = random.Random(4)
    store = _overlay(tmp_path / "s", redis)
    ids = [str(uuid.uuid4()) for _ in range(3)]
    await store.upsert([_point(rng, pid, "a") for pid in ids])
    first = {"s_ref": 0.4, "t_ref": "2024-03-01T00:00:00Z", "n": 1}
    later = {"s_ref": 0.8, "t_ref": "2024-03-02T00:00:00Z", "n": 2}
    await store.set_payload_many("a", [(pid, {"strength": first}) for pid in ids])
    write = store.inner.set_payload_many

    async def racing(tenant: str, patches: Any) -> list[bool]:
        out = await write(tenant, patches)
        await store.set_payload("a", ids[0], {"strength": later})  # lands mid-fold
        return out

    store.inner.set_payload_many = racing  # type: ignore[method-assign]
    assert await store.fold_strengths("a") == 3
    del store.inner.set_payload_many
    assert await redis.hkeys(store._key("a")) == [ids[0].encode()]
    got = {p.id: p.payload["strength"] for p in await store.get("a", ids)}
    assert got == {ids[0]: later, ids[1]: first, ids[2]: first}
    raw = {p.id: p.payload["strength"] for p in await store.inner.get("a", ids)}
    assert _rounded(raw[ids[1]]) == _rounded(first)
    assert await store.fold_strengths("a") == 1
    raw = {p.id: p.payload["strength"] for p in await store.inner.get("a", ids)}
    assert _rounded(raw[ids[0]]) == _rounded(later)
    assert not await redis.hlen(store._key("a"))
    await store.close()
