"""The sweeper's reconsolidation on the in-memory doubles (`MemoryPorts`, Redis from
fakeredis with its Lua): memories written by the write service, the consumers subscribed
on the `TestBus` as the sweeper component subscribes them, so a publish runs them at once.
No server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import fakeredis
import pytest

from pcm_common.domain.clock import utcnow
from pcm_common.messaging.events import (
    GROUP_SWEEPER_RECALLED,
    GROUP_SWEEPER_RECONSOLIDATE,
    GROUP_SWEEPER_RECONSOLIDATE_REQUESTS,
    STREAM_RECALLED,
    STREAM_RECONSOLIDATE,
    STREAM_WRITTEN,
    MemoryRecalled,
    MemoryWritten,
    RecalledItem,
    ReconsolidationRequested,
)
from pcm_common.messaging.reconsolidation import request_reconsolidation
from pcm_common.testing import MemoryPorts
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from pcm_sweeper.handlers import SweeperHandlers
from pcm_sweeper.settings import SweeperSettings


@dataclass
class World:
    ports: MemoryPorts
    ingest: IngestService
    handlers: SweeperHandlers

    async def write(self, tenant: str, text: str, **fields: Any) -> str:
        [result] = await self.ingest.store(tenant, [MemoryIn(text=text, **fields)])
        return str(result.id)

    async def payload(self, tenant: str, memory_id: str) -> dict[str, Any]:
        (point,) = await self.ports.vectors.get(tenant, [memory_id])
        return point.payload

    async def recall(self, tenant: str, *ids: str) -> None:
        items = [RecalledItem(memory_id=m, rank=i, relevance=0.9) for i, m in enumerate(ids)]
        event = MemoryRecalled(tenant=tenant, now=utcnow(), items=items)
        await self.ports.bus.publish(STREAM_RECALLED, event)


@pytest.fixture
async def world() -> AsyncIterator[World]:
    redis = fakeredis.FakeAsyncRedis()
    ports = MemoryPorts(redis)
    ingest = IngestService(ports, IngestSettings(firewall_workers=0))
    # The hashing embedder's cosines are not MiniLM's: every memory is a candidate here.
    settings = SweeperSettings(embedding_dim=ports.embedder.dim, reconsolidation_min_cos=-1.0)
    handlers = SweeperHandlers(ports, settings)
    recon = handlers.reconsolidation
    bus = ports.bus
    bus.consume(STREAM_RECALLED, GROUP_SWEEPER_RECALLED, MemoryRecalled, handlers.on_recalled)
    bus.consume(STREAM_WRITTEN, GROUP_SWEEPER_RECONSOLIDATE, MemoryWritten, recon.on_written)
    bus.consume(
        STREAM_RECONSOLIDATE,
        GROUP_SWEEPER_RECONSOLIDATE_REQUESTS,
        ReconsolidationRequested,
        recon.on_requested,
    )
    try:
        yield World(ports, ingest, handlers)
    finally:
        ingest.screens.stop()
        await redis.aclose()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def test_a_recalled_memory_is_rewritten_by_an_update_once(world: World) -> None:
    t = tenant()
    old = await world.write(t, "The frontend uses React.")
    await world.recall(t, old)
    new = await world.write(t, "We're migrating the frontend from React to Svelte.")
    got = await world.payload(t, old)
    assert got["version"] == 2
    assert got["text"] == (
        "We're migrating the frontend from React to Svelte (before: The frontend uses React)."
    )
    assert got["history"][0]["text"] == "The frontend uses React."
    assert got["history"][0]["by"] == new
    rewrites = [
        e for e in world.ports.bus.events(STREAM_WRITTEN, MemoryWritten) if e.memory_id == old
    ]
    assert [e.status for e in rewrites] == ["created", "reconsolidated"]
    # Within the cooldown a second update changes nothing.
    await world.write(t, "We dropped Svelte and the frontend is moving to Vue.")
    assert (await world.payload(t, old))["version"] == 2
    assert world.ports.bus.failures == []


async def test_nothing_is_rewritten_unless_labile_updated_and_unpinned(world: World) -> None:
    t = tenant()
    unrecalled = await world.write(t, "Our logging goes to Splunk.")
    pinned = await world.write(t, "Deployments go out on Tuesdays.", pinned=True)
    other = await world.write(t, "The standup is at 9:30.", user_id="ann")
    await world.recall(t, pinned, other)
    await world.write(t, "We moved our logging off Splunk and onto Datadog.")
    await world.write(t, "Deployments now go out on Thursdays.")
    await world.write(t, "The standup is held in the small meeting room.", user_id="ann")
    await world.write(t, "The standup is now at 10:00.", user_id="bob")  # another user's
    for mid in (unrecalled, pinned, other):
        assert (await world.payload(t, mid))["version"] == 1


async def test_wrong_feedback_rewrites_from_newer_information_without_a_cue(
    world: World,
) -> None:
    t = tenant()
    old = await world.write(t, "The standup is at 9:30.")
    await world.write(t, "The standup is at 10:15.")
    assert (await world.payload(t, old))["version"] == 1  # no cue: no update
    await request_reconsolidation(world.ports.bus, t, old, "wrong")
    got = await world.payload(t, old)
    assert got["version"] == 2 and got["text"].startswith("The standup is at 10:15")
    # A request for an id the tenant does not hold is ignored.
    await request_reconsolidation(world.ports.bus, tenant(), old, "wrong")
    assert world.ports.bus.failures == []


async def test_a_rewrite_the_firewall_blocks_is_not_stored(world: World) -> None:
    t = tenant()
    old = await world.write(t, "The deploy key lives in the vault.")
    await world.recall(t, old)

    class Leaky:
        async def rewrite(self, old: str, new: str) -> str:
            return "The deploy key is AKIAIOSFODNN7EXAMPLE now (before: in the vault)."

    world.handlers.reconsolidation.rewriter = Leaky()
    await world.write(t, "The deploy key was moved from the vault to the secrets manager.")
    got = await world.payload(t, old)
    assert got["version"] == 1 and got["text"] == "The deploy key lives in the vault."
