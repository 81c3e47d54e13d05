"""The graph fake (`pcm_common.testing.MemoryGraphStore`) answers as the Neo4j adapter does
on a real Neo4j: one scenario of fact writes, rewrites, lookups and deletes run against
both, every answer compared, so the unit tests' graph cannot drift from the real one."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from pcm_common.stores.graph.port import Entity, Extraction, GraphStore, Relation
from pcm_common.testing import MemoryGraphStore

pytestmark = pytest.mark.neo4j

URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
USER = os.environ.get("NEO4J_USER", "neo4j")
PASSWORD = os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")

ANA, BEN = Entity("Ana", "Person"), Entity("Ben  Okafor", "Person")
BERLIN, ACME = Entity("Berlin", "Place"), Entity("Acme", "Organization")
ANA_PLACE = Entity("ana", "Place")  # the same key, another type: another entity

FACTS = {
    "m1": Extraction([ANA, BERLIN], [Relation(ANA, "LIVES_IN", BERLIN)]),
    "m2": Extraction([Entity("ANA", "Person"), ACME], [Relation(ANA, "WORKS_AT", ACME)]),
    "m3": Extraction([BEN, ACME, ANA_PLACE], []),
    "m4": Extraction([Entity("ben okafor", "Person")], [Relation(BEN, "KNOWS", ANA)]),
}
ASKED = ["ana", "Acme", "ben okafor", "Nobody"]


async def _answers(g: GraphStore, tenant: str) -> dict[str, Any]:
    out: dict[str, Any] = {}

    async def look(when: str) -> None:
        out[f"{when} stats"] = await g.stats(tenant)
        out[f"{when} ids"] = await g.memory_ids(tenant)
        out[f"{when} existing"] = sorted(await g.existing_memories(tenant, ["m1", "m3", "mX"]))
        out[f"{when} entities"] = {
            m: sorted((e.type, e.name) for e in await g.entities_of(tenant, m)) for m in FACTS
        }
        out[f"{when} memories_for"] = await g.memories_for(tenant, ASKED)
        out[f"{when} neighbours"] = {m: await g.neighbours(tenant, m) for m in FACTS}
        for max_df in (1, 5):
            links = await g.entity_links(
                tenant, ASKED, max_df=max_df, types=["Organization"], typed_max_df=5
            )
            out[f"{when} links {max_df}"] = sorted(
                (x.key, x.type, x.df, sorted(x.memory_ids), sorted(x.typed), list(x.co))
                for x in links
            )

    for mid, facts in FACTS.items():
        await g.write_facts(tenant, mid, facts)
    await look("written")
    # A rewrite replaces the memory's facts: Berlin is no one's any more.
    await g.write_facts(tenant, "m1", Extraction([ANA], []))
    await look("rewritten")
    await g.delete_memory(tenant, "m3")
    await look("deleted")
    return out


async def test_the_graph_fake_answers_as_neo4j() -> None:
    real = Neo4jGraphStore(URI, USER, PASSWORD, timeout_s=5.0)
    try:
        if not await real.ping():
            pytest.fail(f"no graph server at {URI} (scripts/neo4j.sh start)")
        await real.ensure_schema()
        tenant = f"fake-contract-{uuid.uuid4().hex[:8]}"
        try:
            want = await _answers(real, tenant)
        finally:
            await real.delete_memories(tenant, list(FACTS))
    finally:
        await real.close()
    got = await _answers(MemoryGraphStore(), tenant)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key
