"""Neo4jGraphStore against both Bolt backends: a real Neo4j 5.26 and embedded ArcadeDB.

Start the servers first:  scripts/neo4j.sh start && scripts/arcadedb.sh start
A backend that does not answer FAILS the tests, unless PCM_ALLOW_SKIP_GRAPH=1 (then skip).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from neo4j import AsyncDriver, AsyncGraphDatabase

from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from pcm_common.stores.graph.port import Entity, Extraction, Relation
from pcm_common.stores.graph.schema import (
    ENTITY_TYPES,
    RELATION_TYPES,
    canonical_entity_type,
    canonical_relation_type,
)

pytestmark = pytest.mark.neo4j

USER = os.environ.get("NEO4J_USER", "neo4j")
PASSWORD = os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
BACKENDS = {
    "neo4j": (os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"), "scripts/neo4j.sh start"),
    "arcadedb": (
        os.environ.get("PCM_ARCADE_URI", "bolt://127.0.0.1:7688"),
        "scripts/arcadedb.sh start",
    ),
}


@dataclass
class Backend:
    name: str
    store: Neo4jGraphStore
    driver: AsyncDriver  # independent raw access, to inspect what the adapter wrote


@pytest.fixture(scope="module", params=sorted(BACKENDS))
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    name = request.param
    uri, how = BACKENDS[name]
    store = Neo4jGraphStore(uri, USER, PASSWORD, timeout_s=5.0)
    if not await store.ping():
        await store.close()
        reason = f"{name} graph server does not answer at {uri} (start it: {how})"
        if os.environ.get("PCM_ALLOW_SKIP_GRAPH") == "1":
            pytest.skip(reason)
        pytest.fail(reason + "; set PCM_ALLOW_SKIP_GRAPH=1 to skip instead")
    await store.ensure_schema()
    driver = AsyncGraphDatabase.driver(uri, auth=(USER, PASSWORD))
    try:
        yield Backend(name, store, driver)
    finally:
        await driver.close()
        await store.close()


@pytest.fixture
async def tenant(backend: Backend) -> AsyncIterator[str]:
    """A fresh tenant per test, removed afterwards so the databases do not grow."""
    t = f"test-{uuid.uuid4().hex[:12]}"
    yield t
    await backend.driver.execute_query("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=t)


async def snapshot(driver: AsyncDriver, tenant: str) -> dict[str, Any]:
    """Everything the tenant owns, in a comparable, order-free form."""
    nodes, _, _ = await driver.execute_query(
        "MATCH (n) WHERE n.tenant = $t RETURN labels(n) AS labels, properties(n) AS props",
        t=tenant,
    )
    rels, _, _ = await driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE a.tenant = $t OR b.tenant = $t OR r.tenant = $t "
        "RETURN type(r) AS type, properties(r) AS props, properties(a) AS a, properties(b) AS b",
        t=tenant,
    )

    def dump(x: Any) -> str:
        return json.dumps(x, sort_keys=True, default=str)

    return {
        "nodes": sorted(dump([sorted(r["labels"]), r["props"]]) for r in nodes),
        "rels": sorted(dump([r["type"], r["props"], r["a"], r["b"]]) for r in rels),
    }


ALICE = Entity("Alice  Smith", "Person")
ACME = Entity("ACME Corp", "Organization")
BERLIN = Entity("Berlin", "Place")
PYTHON = Entity("Python", "Technology")
BOB = Entity("Bob", "Person")


def fact_set_one() -> Extraction:
    return Extraction(
        entities=[ALICE, ACME, PYTHON],
        relations=[
            Relation(ALICE, "WORKS_AT", ACME),
            Relation(ACME, "LOCATED_IN", BERLIN),  # endpoint not listed as an entity
            Relation(ALICE, "USES", PYTHON),
            Relation(ALICE, "WORKS_AT", ACME),  # duplicate within one extraction
        ],
    )


async def test_ping_and_schema_idempotent(backend: Backend) -> None:
    assert await backend.store.ping()
    await backend.store.ensure_schema()  # second run must not fail
    report = backend.store.schema_report
    assert set(report) == {
        "pcm_memory_tenant_id",
        "pcm_entity_tenant_type_key",
        "pcm_entity_tenant_key",
        "pcm_entity_tenant_name",
    }
    assert "none" not in report.values(), report


async def test_write_and_read_entities(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", fact_set_one())

    ents = await g.entities_of(tenant, "m1")
    assert {(e.type, e.key) for e in ents} == {
        ("Person", "alice smith"),
        ("Organization", "acme corp"),
        ("Technology", "python"),
        ("Place", "berlin"),
    }
    # Surface form keeps case, normalizes whitespace.
    assert "Alice Smith" in {e.name for e in ents}
    assert await g.stats(tenant) == {"memories": 1, "entities": 4, "mentions": 4, "relations": 3}
    assert await g.entities_of(tenant, "nope") == []

    # Every node and relationship of the tenant carries the tenant; relations carry evidence.
    rows, _, _ = await backend.driver.execute_query(
        "MATCH (a {tenant: $t})-[r]->(b) RETURN type(r) AS type, properties(r) AS p, "
        "b.tenant AS bt",
        t=tenant,
    )
    assert rows and all(r["p"]["tenant"] == tenant and r["bt"] == tenant for r in rows)
    families = [r for r in rows if r["type"] != "MENTIONS"]
    assert sorted(r["type"] for r in families) == ["LOCATED_IN", "USES", "WORKS_AT"]
    for r in families:
        p = r["p"]
        assert p["memory_ids"] == ["m1"]
        assert 0.0 < p["strength"] <= 1.0
        assert p["first_seen"] == p["last_seen"]


async def test_idempotent_under_redelivery(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", fact_set_one())
    await g.write_facts(tenant, "m2", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)]))
    once = await snapshot(backend.driver, tenant)
    stats_once = await g.stats(tenant)

    for _ in range(9):  # 10 deliveries in all
        await g.write_facts(tenant, "m1", fact_set_one())
    assert await snapshot(backend.driver, tenant) == once

    # Concurrent redeliveries (competing consumers) must not double anything either.
    await asyncio.gather(*(g.write_facts(tenant, "m1", fact_set_one()) for _ in range(5)))
    assert await snapshot(backend.driver, tenant) == once
    assert await g.stats(tenant) == stats_once


async def test_second_memory_strengthens_relation(backend: Backend, tenant: str) -> None:
    g = backend.store
    ex = Extraction([ALICE, ACME], [Relation(ALICE, "WORKS_AT", ACME)])
    await g.write_facts(tenant, "m1", ex)
    query = (
        "MATCH (:Entity {tenant: $t})-[r:WORKS_AT]->() RETURN r.memory_ids AS ids, r.strength AS s"
    )
    (one,), _, _ = await backend.driver.execute_query(query, t=tenant)
    await g.write_facts(tenant, "m2", ex)
    await g.write_facts(tenant, "m2", ex)
    (two,), _, _ = await backend.driver.execute_query(query, t=tenant)
    assert one["ids"] == ["m1"] and two["ids"] == ["m1", "m2"]
    assert 0.0 < one["s"] < two["s"] <= 1.0


async def test_concurrent_memories_share_relation(backend: Backend, tenant: str) -> None:
    """Different memories adding the same fact at once: no lost memory_ids, no duplicates."""
    g = backend.store
    ex = Extraction([ALICE, ACME], [Relation(ALICE, "WORKS_AT", ACME)])
    ids = [f"m{i}" for i in range(8)]
    await asyncio.gather(*(g.write_facts(tenant, mid, ex) for mid in ids))
    rows, _, _ = await backend.driver.execute_query(
        "MATCH (:Entity {tenant: $t})-[r:WORKS_AT]->() RETURN r.memory_ids AS ids", t=tenant
    )
    assert len(rows) == 1 and sorted(rows[0]["ids"]) == ids
    assert await g.stats(tenant) == {"memories": 8, "entities": 2, "mentions": 16, "relations": 1}


async def test_tenant_isolation(backend: Backend, tenant: str) -> None:
    g = backend.store
    other = f"{tenant}-other"
    try:
        await g.write_facts(tenant, "m1", fact_set_one())
        await g.write_facts(other, "m1", Extraction([ALICE], []))  # same id, same entity

        assert (await g.stats(tenant))["entities"] == 4
        assert await g.stats(other) == {
            "memories": 1,
            "entities": 1,
            "mentions": 1,
            "relations": 0,
        }
        assert await g.memories_for(other, ["Python", "ACME Corp"]) == {}
        assert {e.key for e in await g.entities_of(other, "m1")} == {"alice smith"}

        await g.delete_memory(other, "m1")
        assert (await g.stats(other))["entities"] == 0
        assert (await g.stats(tenant))["entities"] == 4  # untouched
        assert await g.memories_for(tenant, ["alice smith"]) == {"m1": 1.0}
    finally:
        await backend.driver.execute_query("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=other)


async def test_delete_removes_facts_and_orphans(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", fact_set_one())
    await g.write_facts(
        tenant,
        "m2",
        Extraction(
            [ALICE, ACME, BOB], [Relation(ALICE, "WORKS_AT", ACME), Relation(ALICE, "KNOWS", BOB)]
        ),
    )
    await g.delete_memory(tenant, "m1")

    # Python and Berlin were only in m1: gone, with USES and LOCATED_IN.
    assert {e.key for e in await g.entities_of(tenant, "m2")} == {"alice smith", "acme corp", "bob"}
    assert await g.stats(tenant) == {"memories": 1, "entities": 3, "mentions": 3, "relations": 2}
    rows, _, _ = await backend.driver.execute_query(
        "MATCH (:Entity {tenant: $t})-[r:WORKS_AT]->() RETURN r.memory_ids AS ids", t=tenant
    )
    assert [r["ids"] for r in rows] == [["m2"]]
    assert await g.memories_for(tenant, ["python", "berlin"]) == {}

    await g.delete_memory(tenant, "m1")  # deleting again is harmless
    await g.delete_memory(tenant, "m2")
    assert await snapshot(backend.driver, tenant) == {"nodes": [], "rels": []}


async def test_rewrite_replaces_previous_facts(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", fact_set_one())
    await g.write_facts(tenant, "m1", Extraction([BOB], [Relation(BOB, "LIVES_IN", BERLIN)]))
    assert {e.key for e in await g.entities_of(tenant, "m1")} == {"bob", "berlin"}
    assert await g.stats(tenant) == {"memories": 1, "entities": 2, "mentions": 2, "relations": 1}


async def test_memories_for_strength(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", Extraction([ALICE, ACME, PYTHON], []))
    await g.write_facts(tenant, "m2", Extraction([ALICE], []))
    await g.write_facts(tenant, "m3", Extraction([BOB], []))

    # Case- and whitespace-insensitive lookup by canonical key; unknown names don't dilute.
    got = await g.memories_for(tenant, ["  ALICE   smith ", "acme CORP", "Nobody Known"])
    assert set(got) == {"m1", "m2"}
    assert all(0.0 <= s <= 1.0 for s in got.values())
    assert got["m1"] == 1.0 and got["m2"] == 0.5
    assert next(iter(got)) == "m1"  # strongest first

    assert await g.memories_for(tenant, ["alice smith"], limit=1) == {"m1": 1.0}
    assert await g.memories_for(tenant, []) == {}
    assert await g.memories_for(tenant, ["nobody"]) == {}


async def test_neighbours_share_the_most_entities_first(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts(tenant, "m1", Extraction([ALICE, ACME, PYTHON], []))
    await g.write_facts(tenant, "m2", Extraction([ALICE, ACME], []))
    await g.write_facts(tenant, "m3", Extraction([PYTHON, BOB], []))
    await g.write_facts(tenant, "m4", Extraction([BOB], []))
    # An entity is its type and key: "Acme Corp" the person is another one.
    await g.write_facts(tenant, "m5", Extraction([Entity("acme corp", "Person")], []))
    got = await g.neighbours(tenant, "m1")
    assert got == {"m2": ["acme corp", "alice smith"], "m3": ["python"]}
    assert next(iter(got)) == "m2"  # sharing the most first; never the memory itself
    assert await g.neighbours(tenant, "m1", limit=1) == {"m2": ["acme corp", "alice smith"]}
    assert await g.neighbours(tenant, "m4") == {"m3": ["bob"]}
    assert await g.neighbours(tenant, "nope") == {}
    assert await g.neighbours(f"{tenant}-other", "m1") == {}  # tenants apart


@pytest.mark.parametrize(
    "bad",
    [
        "WORKS_AT]->() DETACH DELETE n //",
        "works_at",  # not canonical: callers map with canonical_relation_type first
        "MENTIONS",  # memory->entity only
        "FRIEND_OF",
    ],
)
async def test_relation_type_validation(backend: Backend, tenant: str, bad: str) -> None:
    g = backend.store
    with pytest.raises(ValueError, match="relation type"):
        await g.write_facts(tenant, "m1", Extraction([ALICE], [Relation(ALICE, bad, ACME)]))
    with pytest.raises(ValueError, match="entity type"):
        await g.write_facts(tenant, "m1", Extraction([Entity("X", "Spaceship")], []))
    # Rejected before any write.
    assert await g.stats(tenant) == {"memories": 0, "entities": 0, "mentions": 0, "relations": 0}


def test_closed_sets() -> None:
    assert len(ENTITY_TYPES) == 13 and len(RELATION_TYPES) == 25
    assert "MENTIONS" not in RELATION_TYPES
    assert canonical_relation_type("works at") == "WORKS_AT"
    assert canonical_relation_type("depends-on") == "DEPENDS_ON"
    assert canonical_relation_type("x) DELETE n") is None
    assert canonical_entity_type("ORGANIZATION") == "Organization"
    assert canonical_entity_type("spaceship") is None


async def test_batch_write_equals_one_by_one(backend: Backend, tenant: str) -> None:
    """write_facts_many over a batch leaves the graph as sequential write_facts would,
    including a memory written twice in one batch (the later one wins) and redelivery."""
    g = backend.store
    other = f"{tenant}-seq"
    carol = Entity("Carol", "Person")
    batch = [
        (tenant, "m1", Extraction([PYTHON], [])),
        (tenant, "m2", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)])),
        (tenant, "m3", Extraction([ALICE, ACME], [Relation(ALICE, "WORKS_AT", ACME)])),
        (tenant, "m1", fact_set_one()),
        (tenant, "m4", Extraction([], [])),
        (tenant, "m5", Extraction([carol], [Relation(carol, "KNOWS", BOB)])),
    ]
    try:
        await g.write_facts_many(batch)
        for _, mid, ex in batch:
            await g.write_facts(other, mid, ex)

        a = _strip(await snapshot(backend.driver, tenant), tenant)
        b = _strip(await snapshot(backend.driver, other), other)
        assert a == b
        assert await g.stats(tenant) == await g.stats(other)
        once = await snapshot(backend.driver, tenant)
        for _ in range(3):  # a redelivered batch changes nothing
            await g.write_facts_many(batch)
        assert await snapshot(backend.driver, tenant) == once
    finally:
        await backend.driver.execute_query("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=other)


def _strip(snap: dict[str, Any], t: str) -> dict[str, Any]:
    # Same facts modulo tenant name, timestamps and the order memories were added.
    return {
        part: sorted(
            json.dumps(_no_times(json.loads(row.replace(t, "T"))), sort_keys=True) for row in rows
        )
        for part, rows in snap.items()
    }


@pytest.mark.parametrize("keyed", [False, True], ids=["one-statement", "keyed-fallback"])
async def test_batch_of_new_and_held_memories(
    backend: Backend, tenant: str, keyed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch mixing new memories with ones the graph already holds (a redelivery, a
    re-extraction after an edit) leaves the graph as one-by-one writes would: only held
    memories are pruned, and a new one has nothing to prune. `keyed`: the same through the
    fallback taken when collect() would not keep the entity rows' order."""
    g = backend.store
    other = f"{tenant}-seq"
    carol = Entity("Carol", "Person")
    first = [
        ("m1", fact_set_one()),
        ("m2", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)])),
        ("m3", Extraction([], [])),
    ]
    second = [
        ("m1", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)])),  # edited
        ("m2", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)])),  # redelivered
        ("m3", Extraction([BERLIN], [])),  # edited, had no facts
        ("m4", Extraction([PYTHON, carol], [Relation(carol, "USES", PYTHON)])),  # new
    ]
    try:
        for mid, ex in first + second:
            await g.write_facts(other, mid, ex)
        with monkeypatch.context() as m:
            if keyed:
                from pcm_common.stores.graph.neo4j import queries

                m.setattr(
                    queries,
                    "WRITE_NODES",
                    queries.WRITE_NODES.replace(
                        "collect(row) = $entities AS aligned", "false AS aligned"
                    ),
                )
            await g.write_facts_many([(tenant, mid, ex) for mid, ex in first])
            await g.write_facts_many([(tenant, mid, ex) for mid, ex in second])
            # A batch without any entity still records its memories.
            await g.write_facts_many([(tenant, "m5", Extraction([], []))])
        await g.write_facts(other, "m5", Extraction([], []))
        a = _strip(await snapshot(backend.driver, tenant), tenant)
        b = _strip(await snapshot(backend.driver, other), other)
        assert a == b
        assert (await g.stats(tenant))["memories"] == 5
        assert not any("ACME" in row for row in a["nodes"])  # pruned orphan
    finally:
        await backend.driver.execute_query("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=other)


def _no_times(x: Any) -> Any:
    if isinstance(x, dict):
        return {
            k: sorted(v) if k == "memory_ids" else _no_times(v)
            for k, v in x.items()
            if k not in ("first_seen", "last_seen")
        }
    if isinstance(x, list):
        return [_no_times(v) for v in x]
    return x


async def test_entity_links_and_memory_ids(backend: Backend, tenant: str) -> None:
    g = backend.store
    await g.write_facts_many(
        [
            (tenant, "m1", Extraction([ALICE, ACME, PYTHON], [])),
            (tenant, "m2", Extraction([ALICE], [])),
            (tenant, "m3", Extraction([ALICE, BOB], [])),
        ]
    )
    asked = ["alice SMITH", "Python", "acme  CORP", "nobody"]
    links = await g.entity_links(tenant, asked, max_df=2)
    by_key = {x.key: x for x in links}
    assert set(by_key) == {"alice smith", "python", "acme corp"}
    assert by_key["alice smith"].df == 3 and by_key["alice smith"].memory_ids == ()  # too broad
    assert by_key["python"].df == 1 and by_key["python"].memory_ids == ("m1",)
    # Co-mentions: the other asked entities a linked memory names (for a broad one, none).
    alice, acme = ("Person", "alice smith"), ("Organization", "acme corp")
    assert by_key["python"].co == tuple(sorted([("m1", *alice), ("m1", *acme)]))
    assert by_key["alice smith"].co == ()
    assert await g.entity_links(tenant, [], max_df=5) == []
    assert await g.entity_links(tenant, ["nobody"], max_df=5) == []

    assert await g.memory_ids(tenant) == ["m1", "m2", "m3"]
    assert await g.existing_memories(tenant, ["m3", "m1", "x"]) == {"m1", "m3"}
    assert await g.existing_memories(tenant, []) == set()
    assert await g.memory_ids(tenant, after="m1", limit=1) == ["m2"]
    assert await g.delete_memories(tenant, ["m1", "m3", "zz"]) == 2
    assert await g.memory_ids(tenant) == ["m2"]
    assert await g.stats(tenant) == {"memories": 1, "entities": 1, "mentions": 1, "relations": 0}


async def test_entity_links_typed(backend: Backend, tenant: str) -> None:
    g = backend.store
    rome, paris = Entity("Rome", "Place"), Entity("Paris", "Place")
    await g.write_facts_many(
        [
            (tenant, "m1", Extraction([BOB, rome], [])),
            (tenant, "m2", Extraction([BOB, paris, PYTHON], [])),
            (tenant, "m3", Extraction([BOB, PYTHON], [])),
            (tenant, "m4", Extraction([ALICE, BERLIN], [])),  # a place, but not Bob's
        ]
    )
    links = await g.entity_links(
        tenant, ["bob", "python"], max_df=1, types=["Place"], typed_max_df=10
    )
    by_key = {x.key: x for x in links}
    assert by_key["bob"].memory_ids == ()  # too broad to link on its own...
    assert sorted(by_key["bob"].typed) == ["m1", "m2"]  # ...but not with a place
    assert by_key["python"].typed == ("m2",)
    # The typed walk and the co-mentions come in the same answer.
    links = await g.entity_links(
        tenant, ["bob", "python"], max_df=2, types=["Place"], typed_max_df=10
    )
    by_key = {x.key: x for x in links}
    assert by_key["python"].co == (("m2", "Person", "bob"), ("m3", "Person", "bob"))
    assert by_key["python"].typed == ("m2",) and by_key["bob"].co == ()
    # Past the typed cap an entity is not walked; without types nothing is.
    links = await g.entity_links(tenant, ["bob"], max_df=1, types=["Place"], typed_max_df=2)
    assert links[0].typed == ()
    links = await g.entity_links(tenant, ["bob"], max_df=5)
    assert links[0].typed == () and len(links[0].memory_ids) == 3


async def test_relations_of_a_memory(backend: Backend, tenant: str) -> None:
    g = backend.store
    other = f"{tenant}-other"
    try:
        await g.write_facts(tenant, "m1", fact_set_one())
        await g.write_facts(other, "m1", Extraction([ALICE, BOB], [Relation(ALICE, "KNOWS", BOB)]))
        got = {(r.source.key, r.type, r.target.key) for r in await g.relations_of(tenant, "m1")}
        assert got == {
            ("alice smith", "WORKS_AT", "acme corp"),
            ("acme corp", "LOCATED_IN", "berlin"),
            ("alice smith", "USES", "python"),
        }
        assert len(await g.relations_of(tenant, "m1", limit=1)) == 1
        assert await g.relations_of(tenant, "m2") == []
    finally:
        await backend.driver.execute_query("MATCH (n) WHERE n.tenant = $t DETACH DELETE n", t=other)
