"""Issue 33 E: graph repair removes a memory's facts only on positive evidence (a tombstone
recorded at its delete, and the vector store no longer holding it), never on absence, and
not at all when the vector store answers empty or fails."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from redis.asyncio import Redis

from pcm_client import AsyncPcmClient, NotFound
from pcm_common.stores.redis import tombstones
from pcm_common.stores.vectors import ScoredPoint
from pcm_sweeper.graph_repair import remove_orphan_facts
from tests.conftest import KEYS, TEST_REDIS_URL


class _Vectors:
    def __init__(self, held: set[str], fail: bool = False) -> None:
        self.held, self.fail = held, fail

    async def count(self, tenant: str, flt: Any = None) -> int:
        return len(self.held)

    async def get(self, tenant: str, ids: Sequence[str], **_: Any) -> list[ScoredPoint]:
        if self.fail:
            raise ConnectionError("vector store unreachable")
        return [ScoredPoint(id=i, score=1.0, payload={}) for i in ids if i in self.held]


class _Graph:
    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    async def memory_ids(self, tenant: str, after: str | None, limit: int) -> list[str]:
        return sorted(i for i in self.ids if after is None or i > after)[:limit]

    async def delete_memories(self, tenant: str, ids: Sequence[str]) -> int:
        self.ids -= set(ids)
        return len(ids)


class _Res:
    def __init__(self, redis: Redis, vectors: _Vectors, graph: _Graph) -> None:
        self.redis, self.vectors, self.graph = redis, vectors, graph


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    client = Redis.from_url(TEST_REDIS_URL)
    yield client
    await client.aclose()


async def test_only_tombstoned_and_absent_memories_lose_their_facts(redis: Redis) -> None:
    tenant = f"evidence-{uuid.uuid4().hex[:8]}"
    # kept: stored; foreign: another deployment's (absent here, no tombstone); deleted:
    # tombstoned and gone; undead: tombstoned but its delete failed (still stored).
    graph = _Graph({"kept", "foreign", "deleted", "undead"})
    await tombstones.record(redis, tenant, ["deleted", "undead"])
    res = _Res(redis, _Vectors({"kept", "undead"}), graph)
    assert await remove_orphan_facts(res, tenant) == 1  # type: ignore[arg-type]
    assert graph.ids == {"kept", "foreign", "undead"}


async def test_an_empty_or_failing_vector_store_removes_nothing(redis: Redis) -> None:
    tenant = f"evidence-{uuid.uuid4().hex[:8]}"
    graph = _Graph({"a", "b"})
    await tombstones.record(redis, tenant, ["a", "b"])
    assert await remove_orphan_facts(_Res(redis, _Vectors(set()), graph), tenant) == 0  # type: ignore[arg-type]
    with pytest.raises(ConnectionError):
        await remove_orphan_facts(_Res(redis, _Vectors({"c"}, fail=True), graph), tenant)  # type: ignore[arg-type]
    assert graph.ids == {"a", "b"}


async def test_a_delete_leaves_a_tombstone(pcm_a: AsyncPcmClient, redis: Redis) -> None:
    mid = (await pcm_a.store("Tombstone probe: Ruth left Bonn.")).id
    assert mid is not None
    assert await tombstones.deleted(redis, KEYS["key-a"], [mid]) == set()
    await pcm_a.delete(mid)
    assert await tombstones.deleted(redis, KEYS["key-a"], [mid]) == {mid}
    # A DELETE of an id the tenant does not hold records nothing.
    other = str(uuid.uuid4())
    with pytest.raises(NotFound):
        await pcm_a.delete(other)
    assert await tombstones.deleted(redis, KEYS["key-a"], [other]) == set()
