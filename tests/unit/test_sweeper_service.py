"""The sweeper's consumers and jobs end to end on the in-memory doubles
(`pcm_common.testing.MemoryPorts`, Redis from fakeredis): memories written by the write
service, the consumers subscribed on the `TestBus` as the sweeper component subscribes them
(so a publish runs them at once), the jobs run through `Jobs.run`. No server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import fakeredis
import pytest

from pcm_common.domain.clock import utcnow
from pcm_common.domain.governance import Policy, ScopeRef
from pcm_common.domain.memory import Scope
from pcm_common.messaging.events import (
    GROUP_SWEEPER_CHANGES,
    GROUP_SWEEPER_GRAPH,
    GROUP_SWEEPER_RECALLED,
    GROUP_SWEEPER_WRITTEN,
    STREAM_CHANGED,
    STREAM_EXTRACTED,
    STREAM_RECALLED,
    STREAM_WRITTEN,
    MemoryChanged,
    MemoryExtracted,
    MemoryRecalled,
    MemoryWritten,
    RecalledItem,
)
from pcm_common.stores.graph.port import Entity, Extraction
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.governance import GovernanceStore
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorPoint
from pcm_common.testing import MemoryPorts
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from pcm_sweeper.handlers import SweeperHandlers
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.routine_changes import RoutineChanges
from pcm_sweeper.settings import SweeperSettings

# One routine: the same bill each month, its amount varying a little.
BILLS = (84, 86, 85, 84, 83)


@dataclass
class Sweeper:
    ports: MemoryPorts
    ingest: IngestService
    handlers: SweeperHandlers
    jobs: Jobs

    async def write(self, tenant: str, *items: MemoryIn | str) -> list[str]:
        batch = [MemoryIn(text=i) if isinstance(i, str) else i for i in items]
        return [str(r.id) for r in await self.ingest.store(tenant, batch)]

    async def payload(self, tenant: str, memory_id: str) -> dict[str, Any]:
        (point,) = await self.ports.vectors.get(tenant, [memory_id])
        return point.payload

    async def s_ref(self, tenant: str, memory_id: str) -> float:
        return float((await self.payload(tenant, memory_id))["strength"]["s_ref"])

    def changes(self, change: str) -> list[str]:
        return [
            e.memory_id
            for e in self.ports.bus.events(STREAM_CHANGED, MemoryChanged)
            if e.change == change
        ]

    def subscribe(self) -> None:
        """The sweeper's consumers, as `SweeperComponent.consume` subscribes them."""
        bus, h = self.ports.bus, self.handlers
        bus.consume_batch(STREAM_WRITTEN, GROUP_SWEEPER_WRITTEN, MemoryWritten, h.on_written_batch)
        bus.consume(STREAM_RECALLED, GROUP_SWEEPER_RECALLED, MemoryRecalled, h.on_recalled)
        changes = RoutineChanges(self.ports)
        bus.consume(STREAM_CHANGED, GROUP_SWEEPER_CHANGES, MemoryChanged, changes.on_changed)
        bus.consume_batch(
            STREAM_EXTRACTED, GROUP_SWEEPER_GRAPH, MemoryExtracted, h.on_extracted_batch
        )


@pytest.fixture
async def sweeper() -> AsyncIterator[Sweeper]:
    redis = fakeredis.FakeAsyncRedis()
    ports = MemoryPorts(redis)
    ingest = IngestService(ports, IngestSettings(firewall_workers=0))
    settings = SweeperSettings(embedding_dim=ports.embedder.dim)  # what repair expects
    world = Sweeper(ports, ingest, SweeperHandlers(ports, settings), Jobs(ports, settings))
    try:
        yield world
    finally:
        ingest.screens.stop()
        await redis.aclose()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def bills(now: datetime) -> list[MemoryIn]:
    return [
        MemoryIn(text=f"Paid the electricity bill of {euros} euros.", created_at=at)
        for euros, at in zip(BILLS, months_before(now, len(BILLS)), strict=True)
    ]


def months_before(now: datetime, n: int) -> list[datetime]:
    return [now - timedelta(days=30 * m) for m in range(n, 0, -1)]


# ---- consumers ----------------------------------------------------------------------------


async def test_written_memories_are_judged_once_and_join_their_routine(sweeper: Sweeper) -> None:
    sweeper.subscribe()
    t = tenant()
    ids = await sweeper.write(t, *bills(utcnow()))
    judged = [(await sweeper.payload(t, m))["surprisal"] for m in ids]
    assert all(s["judged_at"] for s in judged)
    assert set(judged[-1]["family_ids"]) <= set(ids[:-1]) and judged[-1]["family_ids"]
    routine = await sweeper.ports.routines.routine_of(t, ids)
    assert len(set(routine.values())) == 1 and None not in routine.values()
    # A redelivery (or a merged duplicate's event) is not judged again.
    (last,) = sweeper.ports.bus.events(STREAM_WRITTEN, MemoryWritten)[-1:]
    assert await sweeper.handlers.on_written_batch([last]) == [None]
    assert (await sweeper.payload(t, ids[-1]))["surprisal"] == judged[-1]
    assert sweeper.ports.bus.failures == []


async def test_an_update_supersedes_the_same_users_older_statement_only(
    sweeper: Sweeper,
) -> None:
    sweeper.subscribe()
    t = tenant()
    earlier = utcnow() - timedelta(days=20)
    old, bobs = await sweeper.write(
        t,
        MemoryIn(text="The team standup is at 9:30 every morning.", created_at=earlier),
        MemoryIn(text="The team standup is at 9:30 every morning.", user_id="bob"),
    )
    [new] = await sweeper.write(t, "The team standup is now at 10:15 every morning.")
    stale = await sweeper.payload(t, old)
    assert (stale["state"], stale["superseded_by"]) == ("superseded", new)
    assert (await sweeper.payload(t, new))["supersedes"] == old
    assert (await sweeper.payload(t, bobs))["state"] == "active"  # another user's statement
    assert sweeper.changes("superseded") == [old]


async def test_a_deleted_memory_leaves_its_routine(sweeper: Sweeper) -> None:
    sweeper.subscribe()
    t = tenant()
    ids = await sweeper.write(t, *bills(utcnow()))
    assert await sweeper.ingest.edits().delete(t, ids[0])
    routine = await sweeper.ports.routines.routine_of(t, ids)
    assert routine[ids[0]] is None and routine[ids[1]] is not None
    event = MemoryWritten(tenant=t, memory_id=ids[0], text="gone", created_at=utcnow())
    assert await sweeper.handlers.on_written_batch([event]) == [None]  # nothing to judge


async def test_a_recall_reinforces_once_and_spreads_to_episode_mates(sweeper: Sweeper) -> None:
    sweeper.subscribe()
    t = tenant()
    # Written together: one episode (by time) of one owner.
    lunch, pasta, pin = await sweeper.write(
        t,
        "The team lunch is on Fridays.",
        "Rosa's serves pasta on Fridays.",
        MemoryIn(text="Always answer in British English.", pinned=True),
    )
    [bobs] = await sweeper.write(t, MemoryIn(text="Bob's lunch is at one.", user_id="bob"))
    before = {m: await sweeper.s_ref(t, m) for m in (lunch, pasta, pin, bobs)}
    now = utcnow()
    event = MemoryRecalled(
        tenant=t, now=now, items=[RecalledItem(memory_id=lunch, rank=0, relevance=0.9)]
    )
    await sweeper.ports.bus.publish(STREAM_RECALLED, event)
    after = {m: await sweeper.s_ref(t, m) for m in before}
    assert after[lunch] > before[lunch]
    assert before[pasta] < after[pasta] < after[lunch]  # activated, less than recalled
    assert after[pin] == before[pin] and after[bobs] == before[bobs]  # a pin; another user
    recalled = (await sweeper.payload(t, lunch))["strength"]
    assert recalled["n"] == 1 and recalled["last_recalled_at"] is not None
    await sweeper.ports.bus.publish(STREAM_RECALLED, event)  # redelivered: applied once
    assert {m: await sweeper.s_ref(t, m) for m in before} == after
    assert sweeper.ports.bus.failures == []


async def test_extraction_marks_are_written_and_a_missing_memory_is_skipped(
    sweeper: Sweeper,
) -> None:
    t = tenant()
    [mid] = await sweeper.write(t, "Alice moved to Berlin in March.")
    assert (await sweeper.payload(t, mid))["graph"]["extracted"] is False
    events = [
        MemoryExtracted(tenant=t, memory_id=mid, entities=["Alice", "Berlin"], relations=1),
        MemoryExtracted(tenant=t, memory_id=str(uuid.uuid4()), entities=["Nobody"]),
    ]
    assert await sweeper.handlers.on_extracted_batch(events) == [None, None]
    graph = (await sweeper.payload(t, mid))["graph"]
    assert graph["extracted"] is True and graph["entities"] == ["Alice", "Berlin"]


# ---- jobs ---------------------------------------------------------------------------------


async def test_demotion_archives_weak_unused_memories_but_never_a_pin(sweeper: Sweeper) -> None:
    t = tenant()
    weak, pinned = await sweeper.write(
        t, "Lars waters the ferns on Sundays.", MemoryIn(text="Use metric units.", pinned=True)
    )
    assert await sweeper.jobs.run("demotion", utcnow(), tenant=t) == 0  # fresh: kept
    later = utcnow() + timedelta(days=400)
    assert await sweeper.jobs.run("demotion", later, tenant=t) == 1
    assert (await sweeper.payload(t, weak))["state"] == "archived"
    assert (await sweeper.payload(t, pinned))["state"] == "active"
    assert sweeper.changes("archived") == [weak]
    assert await sweeper.jobs.run("demotion", later, tenant=t) == 0  # archived already


async def test_consolidation_writes_one_record_per_settled_episode(sweeper: Sweeper) -> None:
    t = tenant()
    start = utcnow() - timedelta(hours=8)  # quiet for longer than the settle time
    texts = [
        "Booked the flight to Lisbon.",
        "Reserved a hotel in Alfama.",
        "Bought a guide.",
        "Packed the camera.",
    ]
    ids = await sweeper.write(
        t,
        *(
            MemoryIn(text=x, episode="trip", created_at=start + timedelta(minutes=i))
            for i, x in enumerate(texts)
        ),
    )
    assert await sweeper.jobs.run("consolidation", tenant=t) == 1
    [record] = await _records(sweeper, t)
    assert record.payload["metadata"]["sources"] == ids  # oldest first
    assert [line.split("] ", 1)[1] for line in record.payload["text"].splitlines()] == texts
    assert record.payload["episode"] == "trip" and record.payload["graph"]["extracted"]
    assert await sweeper.jobs.run("consolidation", tenant=t) == 0  # current: left as it is
    # A deleted source takes the record with it; the next run rebuilds it from the rest.
    assert await sweeper.ingest.edits().delete(t, ids[1])
    assert await _records(sweeper, t) == [] and record.id in sweeper.changes("deleted")
    assert await sweeper.jobs.run("consolidation", tenant=t) == 1
    [rebuilt] = await _records(sweeper, t)
    assert rebuilt.id == record.id and rebuilt.payload["metadata"]["sources"] == [
        ids[0],
        *ids[2:],
    ]
    # Two sources left: the episode no longer qualifies for a record.
    assert await sweeper.ingest.edits().delete(t, ids[2])
    assert await sweeper.jobs.run("consolidation", tenant=t) == 0
    assert await _records(sweeper, t) == []


async def test_repair_reembeds_a_lost_vector_and_republishes_an_unjudged_memory_once(
    sweeper: Sweeper,
) -> None:
    t = tenant()  # no judging consumer: the memories stay unjudged
    broken, unjudged = await sweeper.write(t, "Alice moved to Berlin.", "Bob moved to Oslo.")
    (point,) = await sweeper.ports.vectors.get(t, [broken])
    await sweeper.ports.vectors.upsert([_zeroed(point.id, point.payload)])
    before = len(sweeper.ports.bus.events(STREAM_WRITTEN, MemoryWritten))
    later = utcnow() + timedelta(seconds=sweeper.jobs.settings.repair_grace_s + 1)
    assert await sweeper.jobs.run("repair", later, tenant=t) == 3  # one vector, two events
    (fixed,) = await sweeper.ports.vectors.get(t, [broken], with_vectors=True)
    assert fixed.vector == pytest.approx(sweeper.ports.embedder.vector("Alice moved to Berlin."))
    again = sweeper.ports.bus.events(STREAM_WRITTEN, MemoryWritten)[before:]
    assert sorted(e.memory_id for e in again) == sorted([broken, unjudged])
    assert {e.status for e in again} == {"repair"}
    assert await sweeper.jobs.run("repair", later, tenant=t) == 0  # once per grace period


async def test_graph_repair_removes_a_deleted_memorys_facts_and_republishes_the_unextracted(
    sweeper: Sweeper,
) -> None:
    t = tenant()
    kept, deleted = await sweeper.write(t, "Alice moved to Berlin.", "Bob moved to Oslo.")
    graph = sweeper.ports.graph
    for mid, name in ((kept, "Alice"), (deleted, "Bob")):
        await graph.write_facts(t, mid, Extraction([Entity(name, "Person")], []))
    await sweeper.handlers.on_extracted_batch(
        [MemoryExtracted(tenant=t, memory_id=kept, entities=["Alice"])]
    )
    assert await sweeper.ingest.edits().delete(t, deleted)  # tombstoned, gone from vectors
    before = len(sweeper.ports.bus.events(STREAM_WRITTEN, MemoryWritten))
    later = utcnow() + timedelta(seconds=sweeper.jobs.settings.repair_grace_s + 1)
    [unextracted] = await sweeper.write(t, "Carol moved to Rome.")
    assert await sweeper.jobs.run("graph_repair", later, tenant=t) == 2
    assert await graph.memory_ids(t) == [kept]  # only the deleted memory's facts went
    again = sweeper.ports.bus.events(STREAM_WRITTEN, MemoryWritten)[before + 1 :]
    assert [e.memory_id for e in again] == [unextracted]


async def test_governance_deletes_past_retention_and_archives_over_a_cap(
    sweeper: Sweeper,
) -> None:
    t = tenant()
    store = GovernanceStore(sweeper.ports.redis)
    await store.put(t, ScopeRef(scope=Scope.PROJECT, project="old"), Policy(retention_days=30))
    await store.put(t, ScopeRef(scope=Scope.PROJECT, project="small"), Policy(max_memories=2))
    now = utcnow()
    in_old = {"scope": "project", "project": "old"}
    expired, recent = await sweeper.write(
        t,
        MemoryIn(text="Sprint 1 ended late.", created_at=now - timedelta(days=60), **in_old),
        MemoryIn(text="Sprint 9 ended on time.", created_at=now - timedelta(days=3), **in_old),
    )
    in_small = {"scope": "project", "project": "small"}
    capped = await sweeper.write(
        t,
        *(
            MemoryIn(text=f"Note {n} of the small project.", importance=tier, **in_small)
            for n, tier in enumerate(("low", "high", "high"))
        ),
    )
    assert await sweeper.jobs.run("governance", now, tenant=t) == 2
    assert await sweeper.ports.vectors.get(t, [expired]) == []
    assert (await sweeper.payload(t, recent))["state"] == "active"
    states = [(await sweeper.payload(t, m))["state"] for m in capped]
    assert states == ["archived", "active", "active"]  # the weakest over the cap
    assert sweeper.changes("deleted") == [expired] and sweeper.changes("archived") == [capped[0]]


async def test_a_job_locked_elsewhere_is_not_run(sweeper: Sweeper) -> None:
    t = tenant()
    await sweeper.write(t, "Lars waters the ferns on Sundays.")
    later = utcnow() + timedelta(days=400)
    await sweeper.ports.redis.set(keys.job_lock("demotion", t), "another replica")
    assert await sweeper.jobs.run("demotion", later, tenant=t) is None
    assert await sweeper.jobs.run("demotion", later) == 0  # every tenant: the locked one skipped
    await sweeper.ports.redis.delete(keys.job_lock("demotion", t))
    assert await sweeper.jobs.run("demotion", later) == 1


async def _records(sweeper: Sweeper, tenant: str) -> list[ScoredPoint]:
    """The tenant's episode records."""
    found, _ = await sweeper.ports.vectors.scroll(
        tenant, flt=Filter(must={"source": "consolidation"})
    )
    return found


def _zeroed(memory_id: str, payload: dict[str, Any]) -> VectorPoint:
    """The point with a zero vector: an upsert whose embedding was lost."""
    return VectorPoint(id=memory_id, vector=[0.0] * 256, payload=payload)
