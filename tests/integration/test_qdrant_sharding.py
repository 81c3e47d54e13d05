"""The Qdrant server adapter sharded by tenant (`PCM_QDRANT_SHARD_GROUPS`), in
qdrant-client's local mode: every call on a tenant's points names the tenant's shard key,
an upsert of several tenants goes out once per shard key, and tenant-free reads name none
(they reach every shard). Local mode takes the shard keys and ignores them (it keeps no
shards and refuses `create_shard_key`), so what a server does with them is not tested
here; the behaviour suite (`test_vector_stores.py`, "server-sharded") runs on this setting."""

from __future__ import annotations

import uuid
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
from httpx import Headers
from qdrant_client import models
from qdrant_client.http.exceptions import UnexpectedResponse

from pcm_common.runtime.config import PcmSettings
from pcm_common.stores.qdrant.server import ServerVectorStore
from pcm_common.stores.qdrant.sharding import shard_key_of, shard_keys
from pcm_common.stores.vectors import Filter
from tests.integration.test_vector_stores import DIM, make_point, rand_vec

# The client calls that carry a tenant's points, and those that read across tenants.
TENANT_CALLS = {"retrieve", "set_payload", "delete", "query_points", "scroll", "count", "upsert"}


class Spy:
    """Records each client call's name and keyword arguments, then makes it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not callable(target):
            return target

        async def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs))
            return await target(*args, **kwargs)

        return call


def test_shard_keys_are_stable_and_spread() -> None:
    assert shard_key_of("acme", 0) is None and shard_keys(0) == []
    assert shard_keys(3) == ["g0", "g1", "g2"]
    assert shard_key_of("acme", 8) == shard_key_of("acme", 8)
    spread = Counter(shard_key_of(f"tenant-{n}", 8) for n in range(4000))
    assert set(spread) == set(shard_keys(8))
    assert max(spread.values()) < 1.2 * 4000 / 8  # within 20% of even


def test_the_setting_reaches_the_adapter(monkeypatch: Any) -> None:
    monkeypatch.setenv("PCM_QDRANT_SHARD_GROUPS", "16")
    assert PcmSettings().qdrant_shard_groups == 16


async def test_every_tenant_call_names_the_tenants_shard_key() -> None:
    store = ServerVectorStore(
        location=":memory:", collection="s_" + uuid.uuid4().hex, dim=DIM, shard_groups=8
    )
    await store.ensure_collection()
    spy = Spy(store._client)
    store._client = spy  # type: ignore[assignment]
    tenants = [f"tenant-{n}" for n in range(6)]
    points = {t: [make_point(t, f"note of {t} {k}") for k in range(3)] for t in tenants}
    await store.upsert([p for ps in points.values() for p in ps])
    for t in tenants:
        ids = [p.id for p in points[t]]
        assert {g.id for g in await store.get(t, ids)} == set(ids)
        hits = await store.search(t, rand_vec(), limit=5, flt=Filter())
        assert {h.payload["tenant"] for h in hits} == {t}
        assert await store.count(t) == 3
        page, _ = await store.scroll(t, limit=10)
        assert len(page) == 3
        assert await store.set_payload(t, ids[0], {"state": "archived"})
        assert await store.delete(t, ids[1:2]) == 1
    # Another tenant's shard key never reaches a tenant's points.
    other = tenants[0]
    assert await store.get(tenants[1], [p.id for p in points[other]]) == []

    upserts = [kw for name, kw in spy.calls if name == "upsert"]
    groups = {shard_key_of(t, 8) for t in tenants}
    assert len(upserts) == len(groups)  # one per shard key, not per point or per tenant
    assert {kw["shard_key_selector"] for kw in upserts} == groups
    tenant_calls = [(n, kw) for n, kw in spy.calls if n in TENANT_CALLS]
    assert len(tenant_calls) > 6 * 6
    assert all(kw.get("shard_key_selector") in groups for _, kw in tenant_calls)
    # Tenant-free reads (a sample, which tenant holds an id) go to every shard.
    spy.calls.clear()
    await store.sample(3)
    await store.tenants_of([points[other][0].id])
    assert all("shard_key_selector" not in kw for _, kw in spy.calls)
    await store.close()


async def test_an_unsharded_store_names_no_shard_key() -> None:
    store = ServerVectorStore(location=":memory:", collection="u_" + uuid.uuid4().hex, dim=DIM)
    await store.ensure_collection()
    spy = Spy(store._client)
    store._client = spy  # type: ignore[assignment]
    p = make_point("A", "hello")
    await store.upsert([p])
    await store.get("A", [p.id])
    await store.search("A", rand_vec(), limit=3)
    assert spy.calls and all("shard_key_selector" not in kw for _, kw in spy.calls)
    await store.close()


class FakeServer:
    """The few calls `ensure_collection` makes of a server, for what local mode skips: an
    existing collection with the given sharding method, and the shard keys made."""

    def __init__(self, method: models.ShardingMethod | None, existing: set[str]) -> None:
        self.method = method
        self.keys = set(existing)
        self.made: list[str] = []

    async def collection_exists(self, name: str) -> bool:
        return True

    async def get_collection(self, name: str) -> Any:
        params = SimpleNamespace(sharding_method=self.method)
        return SimpleNamespace(config=SimpleNamespace(params=params))

    async def create_shard_key(self, name: str, key: str) -> bool:
        if key in self.keys:
            raise UnexpectedResponse(400, "Bad Request", b"Shard key g0 already exists", Headers())
        self.keys.add(key)
        self.made.append(key)
        return True

    async def create_payload_index(self, *args: Any, **kwargs: Any) -> None:
        return None


def _server_store(groups: int, fake: FakeServer) -> ServerVectorStore:
    # Built in local mode (no connection tried), then taken for a server's store.
    store = ServerVectorStore(location=":memory:", dim=DIM, shard_groups=groups)
    store._local = False
    store._client = fake  # type: ignore[assignment]
    return store


async def test_a_sharded_collection_gets_every_shard_key_once() -> None:
    fake = FakeServer(models.ShardingMethod.CUSTOM, existing={"g0"})
    store = _server_store(3, fake)
    await store.ensure_collection()
    assert fake.made == ["g1", "g2"] and fake.keys == {"g0", "g1", "g2"}
    await store.ensure_collection()  # every key exists: nothing made, nothing raised
    assert fake.made == ["g1", "g2"]
    assert store.shard_groups == 3


async def test_an_unsharded_collection_is_served_unsharded() -> None:
    fake = FakeServer(models.ShardingMethod.AUTO, existing=set())
    store = _server_store(3, fake)
    await store.ensure_collection()
    assert store.shard_groups == 0 and fake.made == []
    assert store._shard("acme") == {}
    # Its successor, built by a re-embedding job, is made with the setting.
    assert isinstance(store.beside("next", DIM), ServerVectorStore)
    assert store.beside("next", DIM).shard_groups == 3


async def test_a_sharded_collection_needs_the_setting() -> None:
    store = _server_store(0, FakeServer(models.ShardingMethod.CUSTOM, existing=set()))
    with pytest.raises(ValueError, match="PCM_QDRANT_SHARD_GROUPS"):
        await store.ensure_collection()
