"""The outbox (`pcm_common.messaging.outbox`) makes up for every event a write publishes after
changing a store. On real stores (Redis, Qdrant Edge in a temp dir) each write path runs
with its publishes made to fail, as when Redis restarts between the store change and the
publish: the change is made, the call fails, the stream misses the event; the sweeper's
outbox step then publishes it, once, and publishes nothing for a change that was not made."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from redis.exceptions import ConnectionError as RedisConnectionError

from pcm_common.messaging.events import STREAM_CHANGED, STREAM_WRITTEN, MemoryChanged
from pcm_common.messaging.outbox import owe, publish_owed
from pcm_common.messaging.stream_batches import decode_entry
from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis.keys import OUTBOX_CHANGED
from pcm_ingest.memories import MemoryEdits
from pcm_ingest.schemas import MemoryIn, MemoryPatch
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from pcm_sweeper.archiving import archive
from pcm_sweeper.judging import Judging
from tests.conftest import TEST_REDIS


@dataclass
class World:
    res: Resources
    ingest: IngestService
    tenant: str

    @property
    def memories(self) -> MemoryEdits:
        return self.ingest.edits()


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    settings = IngestSettings(
        redis_url=f"{TEST_REDIS}/13", qdrant_path=tmp_path / "q", firewall_workers=0
    )
    res = Resources(settings)
    await res.vectors.ensure_collection()
    try:
        yield World(res, IngestService(res, settings), f"outbox-{uuid.uuid4().hex[:10]}")
    finally:
        await res.aclose()


class _Failing:
    """Publishes to the given streams fail as a restarting Redis makes them fail."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, res: Resources) -> None:
        self.monkeypatch, self.res = monkeypatch, res

    def streams(self, *streams: str) -> None:
        bus = self.res.bus
        publish, publish_many = bus.publish, bus.publish_many

        async def one(stream: str, event: BaseModel) -> None:
            if stream in streams:
                raise RedisConnectionError("Error 111 connecting (injected)")
            await publish(stream, event)

        async def many(stream: str, events: Sequence[BaseModel]) -> None:
            if stream in streams and events:
                raise RedisConnectionError("Error 111 connecting (injected)")
            await publish_many(stream, events)

        self.monkeypatch.setattr(bus, "publish", one)
        self.monkeypatch.setattr(bus, "publish_many", many)

    def stop(self) -> None:
        self.monkeypatch.undo()


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch, world: World) -> _Failing:
    return _Failing(monkeypatch, world.res)


async def _events(w: World, stream: str) -> list[tuple[str, str]]:
    """(memory id, change or status) of the tenant's events on `stream`, in order."""
    out = []
    for _, fields in await w.res.redis.xrange(stream):
        body = decode_entry(fields)
        if body.get("tenant") == w.tenant:
            out.append((str(body["memory_id"]), str(body.get("change", body.get("status")))))
    return out


async def _fails(call: Awaitable[Any]) -> None:
    with pytest.raises(RedisConnectionError):
        await call


async def _made_up(w: World, failing: _Failing, expected: dict[str, list[tuple[str, str]]]) -> None:
    """Each stream misses its `expected` events; the sweeper's outbox step (with publishing
    back) publishes exactly them, and a second step nothing more."""
    before = {stream: await _events(w, stream) for stream in expected}
    for stream, events in expected.items():
        assert not set(events) & set(before[stream]), (stream, before[stream])
    failing.stop()
    await publish_owed(w.res, grace_s=0)
    after = {stream: await _events(w, stream) for stream in expected}
    for stream, events in expected.items():
        assert after[stream][len(before[stream]) :] == events, (stream, after[stream])
    await publish_owed(w.res, grace_s=0)
    assert {stream: await _events(w, stream) for stream in expected} == after


async def _store(w: World, text: str, **fields: Any) -> str:
    (result,) = await w.ingest.store(w.tenant, [MemoryIn(text=text, **fields)])
    assert result.id is not None
    return result.id


async def _only_memory(w: World) -> dict[str, Any]:
    (point,), _ = await w.res.vectors.scroll(w.tenant)
    return {"id": point.id, **point.payload}


async def test_a_pinned_write(world: World, failing: _Failing) -> None:
    failing.streams(STREAM_CHANGED)
    await _fails(_store(world, "Pin: the spare key is under the blue pot.", pinned=True))
    stored = await _only_memory(world)
    assert stored["pinned"] is True
    await _made_up(world, failing, {STREAM_CHANGED: [(stored["id"], "pinned")]})


async def test_a_repeat_that_reactivates_an_archived_memory(
    world: World, failing: _Failing
) -> None:
    text = "Repeat: Lars waters the ferns on Sundays."
    mid = await _store(world, text)
    await archive(world.res, world.tenant, mid, "test")
    failing.streams(STREAM_CHANGED)
    await _fails(_store(world, text))
    stored = await _only_memory(world)
    assert stored["state"] == "active" and len(stored["repeats"]) == 1
    await _made_up(world, failing, {STREAM_CHANGED: [(mid, "reactivated"), (mid, "repeated")]})


async def test_a_patch_of_the_text_then_of_the_pin(world: World, failing: _Failing) -> None:
    mid = await _store(world, "Patch: the boiler is serviced in May.")
    failing.streams(STREAM_WRITTEN, STREAM_CHANGED)
    new_text = MemoryPatch(text="Patch: the boiler is serviced in June.")
    await _fails(world.memories.patch(world.tenant, mid, new_text))
    stored = await _only_memory(world)
    assert stored["text"].endswith("June.") and stored["version"] == 2
    await _made_up(
        world, failing, {STREAM_WRITTEN: [(mid, "repair")], STREAM_CHANGED: [(mid, "updated")]}
    )
    failing.streams(STREAM_CHANGED)
    await _fails(world.memories.patch(world.tenant, mid, MemoryPatch(pinned=True)))
    assert (await _only_memory(world))["pinned"] is True
    await _made_up(world, failing, {STREAM_CHANGED: [(mid, "pinned")]})


async def test_a_delete_and_the_memory_it_had_superseded(world: World, failing: _Failing) -> None:
    old = await _store(world, "Supersede: the gym opens at 6.")
    new = await _store(world, "Supersede: from now on the gym opens at 7.")
    await world.res.vectors.set_payload_many(
        world.tenant,
        [(old, {"state": "superseded", "superseded_by": new}), (new, {"supersedes": old})],
    )
    failing.streams(STREAM_CHANGED)
    await _fails(world.memories.delete(world.tenant, new))
    # Both changes were made though the first publish failed: the delete, and the older
    # memory current again.
    stored = await _only_memory(world)
    assert stored["id"] == old and stored["state"] == "active"
    await _made_up(world, failing, {STREAM_CHANGED: [(new, "deleted"), (old, "updated")]})


async def test_a_demotion_by_the_sweeper(world: World, failing: _Failing) -> None:
    mid = await _store(world, "Archive: the 2019 tax forms are in the attic.")
    failing.streams(STREAM_CHANGED)
    await _fails(archive(world.res, world.tenant, mid, "test"))
    assert (await _only_memory(world))["state"] == "archived"
    await _made_up(world, failing, {STREAM_CHANGED: [(mid, "archived")]})


async def test_nothing_is_published_for_a_change_that_was_not_made(world: World) -> None:
    """Notes whose change failed after them: a delete of a memory that is still there, a
    pin of a memory that was never stored."""
    mid = await _store(world, "Kept: the passport is in the desk drawer.")
    events = [
        MemoryChanged(tenant=world.tenant, memory_id=mid, change="deleted"),
        MemoryChanged(tenant=world.tenant, memory_id=str(uuid.uuid4()), change="pinned"),
    ]
    await owe(world.res.redis, events)
    before = await _events(world, STREAM_CHANGED)
    await publish_owed(world.res, grace_s=0)
    assert await _events(world, STREAM_CHANGED) == before
    members = [e.model_dump_json() for e in events]
    assert [await world.res.redis.zscore(OUTBOX_CHANGED, m) for m in members] == [None, None]


async def test_a_supersession_by_the_judge(world: World, failing: _Failing) -> None:
    """The verdict and the older memory's state are stored, so a redelivery of the write
    would skip the judged memory: the judge leaves the lost event owed instead of failing."""
    old = await _store(world, "Standup: the team standup is at 9:30 every morning.")
    new = await _store(world, "Standup: the team standup is now at 10:15 every morning.")
    judging = Judging(world.res)
    for mid in (old, new):
        (point,) = await world.res.vectors.get(world.tenant, [mid], with_vectors=True)
        failing.streams(STREAM_CHANGED)
        assert await judging.judge_point(world.tenant, point)
    (stored,) = await world.res.vectors.get(world.tenant, [old])
    assert stored.payload["state"] == "superseded"
    assert stored.payload["superseded_by"] == new
    await _made_up(world, failing, {STREAM_CHANGED: [(old, "superseded")]})
