"""The read path end to end on the in-memory doubles (`pcm_common.testing.MemoryPorts`, Redis
from fakeredis): memories written by the write service, recalled through
`RecallService.recall`, with the sweeper's consumers on the same `TestBus` where flags need
judged memories. No server. The double has no lexical (sparse) search, so recall runs dense
only (`hybrid=False`): relevance is the cosine."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import fakeredis
import pytest

from pcm_common.domain.clock import utcnow
from pcm_common.messaging.events import (
    GROUP_SWEEPER_WRITTEN,
    STREAM_RECALLED,
    STREAM_WRITTEN,
    MemoryRecalled,
    MemoryWritten,
)
from pcm_common.testing import MemoryPorts
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from pcm_recall.schemas import RecallIn, RecallOut
from pcm_recall.service import RecallService
from pcm_recall.settings import RecallSettings
from pcm_sweeper.handlers import SweeperHandlers
from pcm_sweeper.settings import SweeperSettings

LUNCH = "Team lunch is on Fridays at noon."


@dataclass
class Pipeline:
    ports: MemoryPorts
    ingest: IngestService
    recall: RecallService

    async def write(self, tenant: str, *items: MemoryIn | str) -> list[str]:
        batch = [MemoryIn(text=i) if isinstance(i, str) else i for i in items]
        return [str(r.id) for r in await self.ingest.store(tenant, batch)]

    async def ask(self, tenant: str, query: str, **request: Any) -> RecallOut:
        out, _ = await self.recall.recall(tenant, RecallIn(query=query, **request))
        return out

    async def ids(self, tenant: str, query: str, **request: Any) -> list[str]:
        return [c.memory_id for c in (await self.ask(tenant, query, **request)).situational_context]

    def judge_writes(self) -> None:
        """The sweeper's judging consumer on the bus: each write is judged as it is
        published, so its verdict and routine are in place for the next recall."""
        handlers = SweeperHandlers(self.ports, SweeperSettings())
        self.ports.bus.consume_batch(
            STREAM_WRITTEN, GROUP_SWEEPER_WRITTEN, MemoryWritten, handlers.on_written_batch
        )


@pytest.fixture
async def world() -> AsyncIterator[Pipeline]:
    redis = fakeredis.FakeAsyncRedis()
    ports = MemoryPorts(redis)
    ingest = IngestService(ports, IngestSettings(firewall_workers=0))
    try:
        yield Pipeline(ports, ingest, RecallService(ports, RecallSettings(hybrid=False)))
    finally:
        ingest.screens.stop()
        await redis.aclose()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def test_users_see_their_own_and_everyones_memories_never_anothers(
    world: Pipeline,
) -> None:
    t = tenant()
    everyone, alice, bob = await world.write(
        t,
        LUNCH,
        MemoryIn(text="Team lunch is on Fridays at noon, Alice said.", user_id="alice"),
        MemoryIn(text="Team lunch is on Fridays at noon, Bob said.", user_id="bob"),
    )
    query = "When is the team lunch on Fridays?"
    assert set(await world.ids(t, query, user_id="alice")) == {everyone, alice}
    assert set(await world.ids(t, query, user_id="bob")) == {everyone, bob}
    assert set(await world.ids(t, query)) == {everyone, alice, bob}  # the whole tenant


async def test_a_tenant_never_recalls_anothers_memories(world: Pipeline) -> None:
    t1, t2 = tenant(), tenant()
    [mine] = await world.write(t1, LUNCH)
    [theirs] = await world.write(t2, LUNCH)  # the same text, another tenant's memory
    assert await world.ids(t1, "team lunch on Fridays") == [mine]
    assert await world.ids(t2, "team lunch on Fridays") == [theirs]


async def test_a_project_sees_itself_its_workspace_and_global_never_another_project(
    world: Pipeline,
) -> None:
    t = tenant()
    everywhere, north, apollo, zeus = await world.write(
        t,
        "Deploys freeze on Fridays after noon.",
        MemoryIn(
            text="Deploys freeze on Fridays after noon in north.",
            scope="workspace",
            workspace="north",
        ),
        MemoryIn(
            text="Deploys freeze on Fridays after noon for apollo.",
            scope="project",
            workspace="north",
            project="apollo",
        ),
        MemoryIn(
            text="Deploys freeze on Fridays after noon for zeus.",
            scope="project",
            workspace="north",
            project="zeus",
        ),
    )
    query = "Do deploys freeze on Fridays?"
    seen = await world.ids(t, query, workspace="north", project="apollo")
    assert set(seen) == {everywhere, north, apollo}
    assert set(await world.ids(t, query, workspace="north")) == {everywhere, north}
    assert set(await world.ids(t, query)) == {everywhere}  # no project named: global only
    assert zeus in await world.ids(t, query, workspace="north", project="zeus")


async def test_created_before_leaves_out_what_was_written_at_or_after_it(
    world: Pipeline,
) -> None:
    t = tenant()
    now = utcnow()
    old, new = await world.write(
        t,
        MemoryIn(text=LUNCH, created_at=now - timedelta(days=2)),
        MemoryIn(text="Team lunch is on Fridays at one now.", created_at=now),
    )
    assert set(await world.ids(t, "team lunch on Fridays")) == {old, new}
    assert await world.ids(t, "team lunch on Fridays", created_before=now) == [old]


async def test_the_closest_memories_rank_first_and_unrelated_ones_fall_below_the_floor(
    world: Pipeline,
) -> None:
    t = tenant()
    close, partial, unrelated = await world.write(
        t,
        "The team lunch is on Fridays.",
        "The team standup is on Mondays.",
        "Bought new hiking boots in Oslo.",
    )
    out = await world.ask(t, "When is the team lunch on Fridays?")
    got = out.situational_context
    assert [c.memory_id for c in got] == [close, partial]  # the boots: under the floor
    assert got[0].score > got[1].score and got[0].relevance > got[1].relevance
    # ... but written with them (one episode by time), so they come as its context.
    assert [c.memory_id for c in out.episode_context] == [unrelated]
    assert not out.empty and "The team lunch is on Fridays." in out.prompt
    nothing = await world.ask(t, "quantum chromodynamics lecture notes")
    assert nothing.empty and nothing.situational_context == []


async def test_the_askers_project_outranks_the_same_memory_in_global_scope(
    world: Pipeline,
) -> None:
    t = tenant()
    in_global, in_project = await world.write(
        t, LUNCH, MemoryIn(text=LUNCH, scope="project", project="apollo")
    )
    got = (await world.ask(t, "team lunch Fridays", project="apollo")).situational_context
    assert [c.memory_id for c in got] == [in_project, in_global]
    assert got[0].relevance == pytest.approx(got[1].relevance)  # equally relevant
    bonus = world.recall.settings.scope_bonus_project
    assert bonus > 0 and got[0].score == pytest.approx(got[1].score + bonus)


async def test_a_pin_is_delivered_whatever_the_query_and_only_once(world: Pipeline) -> None:
    t = tenant()
    pinned, lunch = await world.write(
        t, MemoryIn(text="Always answer in British English.", pinned=True), LUNCH
    )
    out = await world.ask(t, "When is the team lunch on Fridays?")
    assert [a.memory_id for a in out.asker_context] == [pinned]
    assert [c.memory_id for c in out.situational_context] == [lunch]
    # Written together, the two are one episode: the pin is not shown again as context.
    assert out.episode_context == []
    assert out.prompt.index("British English") < out.prompt.index("Team lunch")
    other = await world.ask(t, "When is the team lunch on Fridays?", user_id="u")
    assert [a.memory_id for a in other.asker_context] == [pinned]  # stored for everyone


async def test_an_archived_memory_needs_a_strong_cue_or_include_archived(
    world: Pipeline,
) -> None:
    t = tenant()
    [mid] = await world.write(t, "Lars waters the ferns in the hall on Sundays.")
    await world.ports.vectors.set_payload(t, mid, {"state": "archived"})
    assert await world.ids(t, "Lars waters the ferns in the hall on Sundays") == [mid]
    weak = "who looks after ferns on Sundays"  # cosine 0.39: over the floor, under 0.4
    assert await world.ids(t, weak) == []
    assert await world.ids(t, weak, include_archived=True) == [mid]


async def test_the_recall_event_names_the_delivered_memories_by_rank(world: Pipeline) -> None:
    t = tenant()
    close, partial = await world.write(
        t, "The team lunch is on Fridays.", "The team standup is on Mondays."
    )
    query = RecallIn(query="When is the team lunch on Fridays?", user_id="u")
    _, event = await world.recall.recall(t, query)
    assert event is not None and event.user_id == "u"
    assert [(i.memory_id, i.rank) for i in event.items] == [(close, 0), (partial, 1)]
    await world.recall.publish(event)
    assert world.ports.bus.events(STREAM_RECALLED, MemoryRecalled) == [event]
    _, none = await world.recall.recall(t, RecallIn(query="quantum chromodynamics"))
    assert none is None  # nothing delivered: nothing to reinforce


async def test_a_bill_far_above_its_routine_is_flagged(world: Pipeline) -> None:
    world.judge_writes()
    t = tenant()
    now = utcnow()
    for month in range(8, 0, -1):
        await world.write(t, _bill(84, now - timedelta(days=30 * month)))
    [outlier] = await world.write(t, _bill(412, now))
    out = await world.ask(t, "electricity bill paid")
    [flag] = out.anomaly_flags
    assert (flag.memory_id, flag.kind) == (outlier, "surprise")
    assert "412" in flag.differs and "84" in (flag.usual or "")
    assert out.prompt.startswith("[ANOMALY FLAGS") and "412 euros" in out.prompt.split("[")[1]
    # Precise recall flags only the routines of what it delivers.
    precise = await world.ask(t, "electricity bill of 412 euros", precision="precise")
    assert [f.memory_id for f in precise.anomaly_flags] == [outlier]
    [lunch] = await world.write(t, LUNCH)
    calm = await world.ask(t, "When is the team lunch on Fridays?", precision="precise")
    assert [c.memory_id for c in calm.situational_context] == [lunch]
    assert calm.anomaly_flags == []


def _bill(euros: int, at: datetime) -> MemoryIn:
    return MemoryIn(text=f"Paid the electricity bill of {euros} euros.", created_at=at)
