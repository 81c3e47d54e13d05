"""The library's other test doubles (`pcm_common.testing`): the bus hands published events
to subscribers as they would come off the stream, and the graph fake keeps the port's
rules (entities shared by key, gone with their last memory, link strength as a share)."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from pcm_common.messaging.events import STREAM_CHANGED, MemoryChanged
from pcm_common.stores.graph.port import Entity, Extraction, Relation
from pcm_common.testing import HashEmbedder, MemoryGraphStore, TestBus


def _changed(memory_id: str, change: str = "pinned") -> MemoryChanged:
    return MemoryChanged(tenant="t", memory_id=memory_id, change=change)


async def test_the_bus_hands_events_to_every_group_and_keeps_failures_apart() -> None:
    bus = TestBus()
    seen: list[str] = []
    batches: list[int] = []

    async def one(e: MemoryChanged) -> None:
        if e.memory_id == "bad":
            raise ValueError("cannot")
        seen.append(e.memory_id)

    async def many(events: list[MemoryChanged]) -> list[BaseException | None]:
        batches.append(len(events))
        return [None] * len(events)

    bus.consume(STREAM_CHANGED, "g1", MemoryChanged, one)
    bus.consume_batch(STREAM_CHANGED, "g2", MemoryChanged, many, max_batch=2)
    await bus.publish_many(STREAM_CHANGED, [_changed("a"), _changed("bad"), _changed("c")])
    assert seen == ["a", "c"] and batches == [2, 1]
    [failure] = bus.failures
    assert (failure.group, failure.body["memory_id"]) == ("g1", "bad")
    assert [e.memory_id for e in bus.events(STREAM_CHANGED, MemoryChanged)] == ["a", "bad", "c"]


async def test_a_failing_stream_refuses_publishes() -> None:
    bus = TestBus()
    bus.fail(STREAM_CHANGED)
    with pytest.raises(RedisConnectionError):
        await bus.publish(STREAM_CHANGED, _changed("a"))
    bus.fail()
    await bus.publish(STREAM_CHANGED, _changed("a"))
    assert len(bus.published[STREAM_CHANGED]) == 1


async def test_the_graph_fake_keeps_the_ports_rules() -> None:
    g = MemoryGraphStore()
    ana, berlin = Entity("Ana", "Person"), Entity("Berlin", "Place")
    lives = Relation(ana, "LIVES_IN", berlin)
    await g.write_facts("t", "m1", Extraction([ana, berlin], [lives]))
    await g.write_facts("t", "m2", Extraction([Entity("  ana ", "Person")], []))
    assert await g.memories_for("t", ["ANA", "berlin", "Nowhere"]) == {"m1": 1.0, "m2": 0.5}
    assert await g.memories_for("other", ["Ana"]) == {}  # tenants apart
    assert await g.neighbours("t", "m2") == {"m1": ["ana"]}
    assert await g.neighbours("t", "m1", limit=0) == {}
    [ana_links, _] = await g.entity_links("t", ["ana", "berlin"], max_df=1)
    assert (ana_links.key, ana_links.df, ana_links.memory_ids) == ("ana", 2, ())
    [_, berlin_links] = await g.entity_links("t", ["ana", "berlin"], max_df=5)
    assert berlin_links.co == (("m1", "Person", "ana"),)
    assert await g.stats("t") == {"memories": 2, "entities": 2, "mentions": 3, "relations": 1}
    await g.delete_memory("t", "m1")
    assert [e.name for e in await g.entities_of("t", "m2")] == ["Ana"]
    assert await g.stats("t") == {"memories": 1, "entities": 1, "mentions": 1, "relations": 0}
    # An entity is its type and key: "Ana" the place is another one.
    await g.write_facts("t", "m3", Extraction([Entity("ANA", "Place")], []))
    assert [(x.type, x.df) for x in await g.entity_links("t", ["Ana"], max_df=5)] == [
        ("Person", 1),
        ("Place", 1),
    ]
    with pytest.raises(ValueError):
        await g.write_facts("t", "m4", Extraction([Entity("Ana", "Wizard")], []))
    await g.delete_memory("t", "m3")
    assert await g.memory_ids("t") == ["m2"] and await g.existing_memories("t", ["m1", "m2"]) == {
        "m2"
    }


def test_the_hash_embedder_reads_words_not_punctuation() -> None:
    e = HashEmbedder()

    def cos(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(e.vector(a), e.vector(b), strict=True))

    assert cos("Ran 5k in 27:10 today.", "ran 5k in 27:10 today!") == pytest.approx(1.0)
    near = cos("Lars waters the ferns on Sundays and Mondays", "Lars waters the ferns on Sundays")
    assert 0.85 < near < 0.97
    assert cos("Lars waters the ferns", "The invoice is due in March") < 0.5
