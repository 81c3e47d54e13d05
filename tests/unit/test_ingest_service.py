"""The write service and the memory edits end to end on the in-memory doubles
(`pcm_common.testing`, Redis from fakeredis): no server, same rules as on the real stores."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import fakeredis
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from pcm_common.domain.clock import utcnow
from pcm_common.domain.governance import CaptureMode, Policy, ScopeRef
from pcm_common.domain.memory import Scope
from pcm_common.messaging.events import STREAM_CHANGED, STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.ports import Ports
from pcm_common.stores.redis.governance import GovernanceStore
from pcm_common.stores.redis.keys import OUTBOX_WRITTEN, TENANTS
from pcm_common.stores.vectors import Filter
from pcm_common.testing import HashEmbedder, MemoryVectorStore, TestBus
from pcm_ingest.firewall import SecretDetected
from pcm_ingest.idempotency import WritePlan
from pcm_ingest.memories import MemoryEdits
from pcm_ingest.schemas import MemoryIn, MemoryPatch
from pcm_ingest.service import CaptureRefused, IngestService
from pcm_ingest.settings import IngestSettings

A = "Ran 5k in 27:10 this morning along the river."
A2 = "Ran 5k in 27:10 this morning along the river!"  # the same words: cos 1
B = "Lars waters the ferns on Sundays."


@dataclass
class World:
    ingest: IngestService
    memories: MemoryEdits
    vectors: MemoryVectorStore
    bus: TestBus
    redis: fakeredis.FakeAsyncRedis
    embedder: HashEmbedder

    async def store(self, tenant: str, *items: MemoryIn | str) -> list[tuple[str, str]]:
        batch = [MemoryIn(text=i) if isinstance(i, str) else i for i in items]
        return [(str(r.id), r.status) for r in await self.ingest.store(tenant, batch)]

    async def payload(self, tenant: str, memory_id: str) -> dict[str, Any]:
        (point,) = await self.vectors.get(tenant, [memory_id])
        return point.payload

    def changes(self) -> list[tuple[str, str]]:
        return [(e.memory_id, e.change) for e in self.bus.events(STREAM_CHANGED, MemoryChanged)]

    def written(self) -> list[str]:
        return [e.memory_id for e in self.bus.events(STREAM_WRITTEN, MemoryWritten)]


@pytest.fixture
async def world() -> AsyncIterator[World]:
    redis = fakeredis.FakeAsyncRedis()
    vectors, bus = MemoryVectorStore(), TestBus()
    embedder = HashEmbedder()
    ports = Ports(redis=redis, vectors=vectors, bus=bus, embedder=embedder)
    ingest = IngestService(ports, IngestSettings(firewall_workers=0))
    try:
        yield World(ingest, ingest.edits(), vectors, bus, redis, embedder)
    finally:
        ingest.screens.stop()
        await redis.aclose()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def test_a_new_memory_is_stored_and_announced(world: World) -> None:
    t = tenant()
    [(mid, status)] = await world.store(t, A)
    assert status == "created"
    stored = await world.payload(t, mid)
    assert stored["text"] == A and stored["figures"] == ["5k", "27:10"]
    assert stored["state"] == "active" and stored["episode"].startswith("auto-")
    assert world.written() == [mid]
    assert await world.redis.sismember(TENANTS, t)
    assert await world.redis.zcard(OUTBOX_WRITTEN) == 0  # published, crossed out


async def test_a_repeat_reinforces_and_a_near_duplicate_merges(world: World) -> None:
    t = tenant()
    [(mid, _)] = await world.store(t, A)
    assert await world.store(t, A) == [(mid, "reinforced")]
    assert await world.store(t, A2) == [(mid, "merged")]
    stored = await world.payload(t, mid)
    assert len(stored["repeats"]) == 2
    assert world.changes() == [(mid, "repeated"), (mid, "repeated")]
    assert world.written() == [mid]  # announced once, when it was new
    assert await world.vectors.count(t) == 1


async def test_a_batch_stores_what_one_at_a_time_would(world: World) -> None:
    t = tenant()
    got = await world.store(t, A, B, A, A2)
    (a, _), (b, _) = got[0], got[1]
    assert got == [(a, "created"), (b, "created"), (a, "reinforced"), (a, "merged")]
    assert len((await world.payload(t, a))["repeats"]) == 2
    assert sorted(world.written()) == sorted([a, b])
    assert world.embedder.calls == [3]  # one call; the exact copy is not embedded


async def test_other_figures_are_another_memory(world: World) -> None:
    t = tenant()
    [(first, _)] = await world.store(t, A)
    [(other, status)] = await world.store(t, "Ran 5k in 41:30 this morning along the river.")
    assert status == "created" and other != first


async def test_one_users_text_never_reinforces_anothers(world: World) -> None:
    t = tenant()
    got = await world.store(t, MemoryIn(text=A, user_id="u1"), MemoryIn(text=A, user_id="u2"))
    assert [s for _, s in got] == ["created", "created"]
    [(again, status)] = await world.store(t, MemoryIn(text=A2, user_id="u2"))
    assert (again, status) == (got[1][0], "merged")
    assert (await world.payload(t, got[0][0]))["repeats"] == []  # u1's is untouched


async def test_scopes_are_apart(world: World) -> None:
    t = tenant()
    project = MemoryIn(text=A, scope="project", workspace="w", project="p")
    got = await world.store(t, A, project, MemoryIn(text=A, scope="workspace", workspace="w"))
    assert [s for _, s in got] == ["created"] * 3
    assert len({i for i, _ in got}) == 3


async def test_a_keyed_retry_changes_nothing(world: World) -> None:
    t = tenant()
    plan = WritePlan(key="k1", now=utcnow(), replay=False)
    first = [(str(r.id), r.status) for r in await world.ingest.store(t, [MemoryIn(text=A)], plan)]
    again = WritePlan(key="k1", now=plan.now, replay=True)
    second = [(str(r.id), r.status) for r in await world.ingest.store(t, [MemoryIn(text=A)], again)]
    assert first == second == [(plan.memory_id(t, 0), "created")]
    assert not (await world.payload(t, first[0][0]))["repeats"]
    assert world.written() == [first[0][0]] * 2  # the retry owes the events again


async def test_a_secret_is_refused_and_nothing_is_stored(world: World) -> None:
    t = tenant()
    with pytest.raises(SecretDetected):
        await world.store(t, B, "my key is AKIAIOSFODNN7EXAMPLE ok")
    assert await world.vectors.count(t) == 0
    assert world.written() == []


async def test_a_failed_publish_leaves_the_events_owed(world: World) -> None:
    t = tenant()
    world.bus.fail(STREAM_WRITTEN)
    with pytest.raises(RedisConnectionError):
        await world.store(t, A)
    (point,), _ = await world.vectors.scroll(t)
    assert await world.redis.zcard(OUTBOX_WRITTEN) == 1  # the sweeper publishes it
    world.bus.fail()
    assert await world.store(t, A) == [(point.id, "reinforced")]


async def test_get_list_patch_delete(world: World) -> None:
    t = tenant()
    [(a, _), (b, _)] = await world.store(t, A, MemoryIn(text=B, user_id="u1"))
    got = await world.memories.get(t, a)
    assert got is not None and got["text"] == A and 0 < got["current_strength"] <= 1
    assert "figures_key" not in got  # derived fields stay inside
    page, nxt = await world.memories.list(t, Filter(must={"user_id": "u1"}), 10, None)
    assert [m["id"] for m in page] == [b] and nxt is None
    patched = await world.memories.patch(t, a, MemoryPatch(text="Ran 5k in 26:55 this morning."))
    assert patched is not None and patched["version"] == 2
    assert patched["history"][0]["text"] == A
    assert world.written() == [a, b, a]  # a new text is announced again (extracted anew)
    pinned = await world.memories.patch(t, b, MemoryPatch(pinned=True))
    assert pinned is not None and pinned["pinned"] is True
    assert (b, "pinned") in world.changes()
    stats = await world.memories.stats(t, {})
    assert stats["memories"] == 2 and stats["pinned"] == 1
    assert await world.memories.delete(t, a)
    assert await world.memories.get(t, a) is None
    assert not await world.memories.delete(t, a)
    assert (a, "deleted") in world.changes()


async def test_a_tenant_never_sees_or_changes_anothers_memories(world: World) -> None:
    t1, t2 = tenant(), tenant()
    [(mid, _)] = await world.store(t1, A)
    assert await world.memories.get(t2, mid) is None
    assert await world.memories.patch(t2, mid, MemoryPatch(pinned=True)) is None
    assert not await world.memories.delete(t2, mid)
    assert (await world.memories.list(t2, Filter(), 10, None))[0] == []
    [(other, status)] = await world.store(t2, A)  # the same text: the other tenant's own
    assert status == "created" and other != mid
    assert (await world.payload(t1, mid))["pinned"] is False


async def test_predictable_hook_captures_are_skipped_and_explicit_stores_never_are(
    world: World,
) -> None:
    t = tenant()
    got = await world.ingest.store(
        t,
        [
            MemoryIn(text="ok go ahead", source="hook"),  # chatter a hook sent: gated
            MemoryIn(text="The deploy key rotates on Fridays.", source="hook"),
            MemoryIn(text="ok go ahead"),  # the same words asked for explicitly: kept
        ],
    )
    assert [(r.status, r.reason) for r in got] == [
        ("skipped", "capture_gate"),
        ("created", None),
        ("created", None),
    ]
    assert got[0].id is None  # nothing stored, so no id
    assert sorted(world.written()) == sorted([str(got[1].id), str(got[2].id)])
    assert await world.vectors.count(t) == 2


async def test_a_scopes_capture_mode_skips_captures_or_refuses_stores(world: World) -> None:
    t = tenant()
    governance = GovernanceStore(world.redis)
    manual = ScopeRef(scope=Scope.PROJECT, project="manual")
    await governance.put(t, manual, Policy(capture_mode=CaptureMode.MANUAL_ONLY))
    hooks = ScopeRef(scope=Scope.PROJECT, project="hooks")
    await governance.put(t, hooks, Policy(capture_mode=CaptureMode.HOOKS_ONLY))
    in_manual = {"scope": "project", "project": "manual"}
    got = await world.ingest.store(
        t,
        [
            MemoryIn(text="Ran the migration on staging.", source="hook", **in_manual),
            MemoryIn(text="Staging runs Postgres 16.", **in_manual),
        ],
    )
    assert [(r.status, r.reason) for r in got] == [("skipped", "capture_mode"), ("created", None)]
    in_hooks = {"scope": "project", "project": "hooks"}
    with pytest.raises(CaptureRefused) as refused:
        await world.store(
            t,
            MemoryIn(text="A fact captured by a hook.", source="hook", **in_hooks),
            MemoryIn(text="A fact stored by hand.", **in_hooks),
        )
    assert refused.value.items == [{"index": 1, "capture_mode": "hooks_only"}]
    assert await world.vectors.count(t) == 1  # nothing of the refused request is stored


async def test_pii_is_redacted_in_text_and_metadata(world: World) -> None:
    t = tenant()
    [(mid, status)] = await world.store(
        t,
        MemoryIn(
            text="Mail Dana at dana.smith@example.com about the lease.",
            metadata={"from": "call +1 415 555 0134"},
        ),
    )
    assert status == "redacted"
    stored = await world.payload(t, mid)
    assert stored["text"] == "Mail Dana at [REDACTED_EMAIL] about the lease."
    assert stored["metadata"] == {"from": "call [REDACTED_PHONE]"}
    (event,) = world.bus.events(STREAM_WRITTEN, MemoryWritten)
    assert "example.com" not in event.text  # downstream sees the redacted text only


async def test_a_secret_in_metadata_or_a_name_blocks_the_request_by_its_index(
    world: World,
) -> None:
    t = tenant()
    with pytest.raises(SecretDetected) as in_metadata:
        await world.store(
            t,
            MemoryIn(text="thanks", source="hook"),  # skipped: the next item stays index 1
            MemoryIn(text="Rotated the key.", metadata={"key": "AKIAIOSFODNN7EXAMPLE"}),
        )
    assert in_metadata.value.items == [
        {"index": 1, "field": "metadata", "kinds": ["AWS Access Key"]}
    ]
    with pytest.raises(SecretDetected) as in_name:
        await world.store(t, B, MemoryIn(text=A, user_id="AKIAIOSFODNN7EXAMPLE"))
    assert [(i["index"], i["field"]) for i in in_name.value.items] == [(1, "user_id")]
    assert await world.vectors.count(t) == 0 and world.written() == []
