"""Distilled facts follow their sources' deletion (`pcm_common.data.derived_facts`, through
`pcm_common.data.forgetting.Forgetter`) on the in-memory doubles: what a crash between a
delete and this step, two deletes at once, or a distillation racing a delete leave is
made right. The HTTP routes are tested on the real servers in
`tests/integration/test_fact_sources.py`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import fakeredis
import pytest

from pcm_common.data.forgetting import Forgetter
from pcm_common.domain import consolidation as cons
from pcm_common.domain import distil
from pcm_common.extract.facts import Found
from pcm_common.messaging.events import STREAM_CHANGED, MemoryChanged
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.capture_buffer import CaptureBuffer
from pcm_common.stores.redis.tombstones import record as tombstone
from pcm_common.stores.vectors import Filter, VectorPoint
from pcm_common.testing import MemoryPorts
from pcm_sweeper.distil import Distiller
from pcm_sweeper.fact_changes import FactChanges

T = "t"
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
OWNER = {"user_id": None, "scope": "project", "workspace": "", "project": "api"}


class Berlin:
    """A fact source that finds one statement in every text."""

    async def facts(self, sources: Sequence[distil.Source]) -> list[Found]:
        return [("Alice lives in Berlin.", s, None) for s in sources]


def u(name: str) -> str:
    """A point id (the stores take UUIDs) named for the test's reading."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


A = u("a")
B = u("b")
C = u("c")
F1 = u("f1")
F2 = u("f2")
F3 = u("f3")
OLD = u("old")
NEW = u("new")
NEWER = u("newer")
GONE = u("gone")
F = u("f")


@pytest.fixture
def ports() -> MemoryPorts:
    return MemoryPorts(redis=fakeredis.FakeAsyncRedis())


async def put(ports: MemoryPorts, pid: str, text: str, **payload: Any) -> None:
    vec = await ports.embedder.embed_one(text)
    body = {"tenant": T, "id": pid, "text": text, "state": "active", **OWNER, **payload}
    await ports.vectors.upsert([VectorPoint(id=pid, vector=vec, payload=body)])


async def fact(ports: MemoryPorts, pid: str, sources: list[str], **payload: Any) -> None:
    await put(
        ports,
        pid,
        f"fact {pid}",
        kind=distil.KIND,
        source="consolidation",
        sources=sources,
        **payload,
    )


async def sources_of(ports: MemoryPorts, pid: str) -> list[str] | None:
    found = await ports.vectors.get(T, [pid])
    return list(found[0].payload["sources"]) if found else None


async def test_a_delete_drops_the_facts_left_without_source_and_trims_the_others(
    ports: MemoryPorts,
) -> None:
    for m in (A, B):
        await put(ports, m, f"memory {m}")
    await fact(ports, F1, [A])
    await fact(ports, F2, [A, B])
    await fact(ports, F3, [B])
    forgetter = Forgetter(ports)
    assert await forgetter.forget(T, A)
    assert await sources_of(ports, F1) is None
    assert await sources_of(ports, F2) == [B]
    assert await sources_of(ports, F3) == [B]
    changed = {(e.memory_id, e.change) for e in ports.bus.events(STREAM_CHANGED, MemoryChanged)}
    assert {(A, "deleted"), (F1, "deleted"), (F2, "updated")} == changed
    assert await ports.redis.zcard(keys.OUTBOX_CHANGED) == 0  # every owed event paid
    # Following the same delete again (the sweeper's pass over its event) changes nothing.
    assert await forgetter.facts.follow(T, [A], "again") == (0, 0)


async def test_a_crash_between_the_delete_and_the_facts_is_made_up_by_the_sweeper(
    ports: MemoryPorts,
) -> None:
    await put(ports, A, "memory a")
    await fact(ports, F1, [A])
    # The memory went, the process stopped before its facts: the delete event was owed.
    await ports.vectors.delete(T, [A])
    handler = FactChanges(ports)
    await handler.on_changed(MemoryChanged(tenant=T, memory_id=A, change="deleted"))
    assert await sources_of(ports, F1) is None
    # A redelivered event finds nothing more to do.
    await handler.on_changed(MemoryChanged(tenant=T, memory_id=A, change="deleted"))
    await handler.on_changed(MemoryChanged(tenant=T, memory_id=F1, change="updated"))


async def test_a_source_deleted_at_the_same_time_is_not_put_back(ports: MemoryPorts) -> None:
    for m in (A, B, C):
        await put(ports, m, f"memory {m}")
    await fact(ports, F, [A, B, C])
    # Another delete of "b" is under way: its tombstone is written, its trim not yet.
    await tombstone(ports.redis, T, [B])
    await Forgetter(ports).forget(T, A)
    assert await sources_of(ports, F) == [C]


async def test_deleting_the_newer_fact_makes_the_older_current_and_superseded_facts_go_too(
    ports: MemoryPorts,
) -> None:
    for m in (A, B):
        await put(ports, m, f"memory {m}")
    await fact(ports, OLD, [A], state="superseded", superseded_by=NEW)
    await fact(ports, NEW, [B], supersedes=OLD)
    forgetter = Forgetter(ports)
    await forgetter.forget(T, B)
    assert await sources_of(ports, NEW) is None
    (old,) = await ports.vectors.get(T, [OLD])
    assert old.payload["state"] == "active" and old.payload["superseded_by"] is None

    await fact(ports, NEWER, [A], supersedes=OLD)
    await ports.vectors.set_payload(T, OLD, {"state": "superseded", "superseded_by": NEWER})
    await forgetter.forget(T, A)  # the superseded fact goes with its source
    assert await sources_of(ports, OLD) is None and await sources_of(ports, NEWER) is None


async def test_distillation_does_not_write_a_source_deleted_while_it_ran(
    ports: MemoryPorts,
) -> None:
    distiller = Distiller(ports, lambda: Berlin(), CaptureBuffer(ports.redis))
    key = cons.GroupKey(episode="e", user_id=None, scope="project", workspace="", project="api")
    members = [cons.Member(id=GONE, text="alice is in berlin", created_at=NOW)]
    await tombstone(ports.redis, T, [GONE])
    assert await distiller.run(T, NOW, {key: members}) == 0
    points, _ = await ports.vectors.scroll(T, flt=Filter(must={"kind": distil.KIND}))
    assert points == []
