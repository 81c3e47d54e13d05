"""Recall graph links: IDF link strengths, caps, graceful degradation (fakes), and one real
round trip against the Bolt graph (Neo4j at NEO4J_URI)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from pcm_common.extract import Extractor
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from pcm_common.stores.graph.port import Entity, EntityLinks, Extraction
from pcm_common.stores.vectors import ScoredPoint
from pcm_recall.graph_links import (
    GraphLinker,
    GraphLinks,
    fetch_linked,
    link_strengths,
)


class FixedExtractor(Extractor):
    def __init__(self, entities: list[Entity]) -> None:
        self.entities = entities
        self.calls = 0

    async def extract(self, text: str) -> Extraction:
        self.calls += 1
        return Extraction(self.entities, [])


class FakeGraph(Neo4jGraphStore):
    """Only entity_links matters here; delay/failure are injectable. ``count`` stands in
    for the memory store's count of the tenant (recall's N)."""

    def __init__(self, answer: tuple[int, list[EntityLinks]], delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.fail: Exception | None = None
        self.calls = 0
        self.counted = 0

    async def count(self, tenant: str) -> int:
        self.counted += 1
        return self.answer[0]

    async def entity_links(
        self,
        tenant: str,
        names: Sequence[str],
        *,
        max_df: int,
        types: Sequence[str] = (),
        typed_max_df: int = 0,
    ) -> list[EntityLinks]:
        self.calls += 1
        self.types = list(types)
        await asyncio.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        return [
            EntityLinks(
                e.key,
                e.type,
                e.df,
                e.memory_ids if e.df <= max_df else (),
                e.typed if types and e.df <= typed_max_df else (),
                e.co if e.df <= max_df else (),
            )
            for e in self.answer[1]
        ]


def linker_of(graph: FakeGraph, extractor: Extractor, **kw: Any) -> GraphLinker:
    return GraphLinker(graph, extractor, count=graph.count, **kw)


CAROLINE = EntityLinks("caroline", "Person", 300, tuple(f"c{i}" for i in range(300)))
SWEDEN = EntityLinks("sweden", "Place", 2, ("m1", "m2"))
ADOPTION = EntityLinks("adoption", "Concept", 3, ("m2", "m3", "m4"))


def test_link_strengths_idf_and_caps() -> None:
    got = link_strengths(1000, [SWEDEN, ADOPTION], max_links=10)
    assert got["m2"] == 1.0  # mentions both query entities
    assert got["m1"] > got["m3"] > 0  # the rarer entity weighs more
    assert next(iter(got)) == "m2"
    assert len(link_strengths(1000, [SWEDEN, ADOPTION], max_links=2)) == 2
    assert link_strengths(1000, [SWEDEN, ADOPTION], max_links=10, min_link=0.5) == {
        "m2": 1.0,
        "m1": got["m1"],
    }
    assert link_strengths(0, [SWEDEN], max_links=5) == {}
    # A broad entity without ids still counts in the denominator: it dilutes, links nothing.
    broad = EntityLinks("caroline", "Person", 300, ())
    diluted = link_strengths(1000, [broad, SWEDEN], max_links=10)
    assert set(diluted) == {"m1", "m2"} and 0.5 < diluted["m1"] < 1.0


def test_ties_at_the_cap_go_to_the_memories_closer_to_the_query() -> None:
    # m2..m4 mention only "adoption": equally linked. Cut at two, the tie at the cut comes
    # back whole (tie_room) and the query's cosines break it, not the random memory ids.
    tied = link_strengths(1000, [SWEDEN, ADOPTION], max_links=3, tie_room=5)
    assert set(tied) == {"m1", "m2", "m3", "m4"}
    assert len(link_strengths(1000, [SWEDEN, ADOPTION], max_links=3)) == 3
    links = GraphLinks(links=tied, cap=3)
    kept = links.closest({"m1": 0.2, "m2": 0.3, "m3": 0.1, "m4": 0.5})
    assert list(kept) == ["m2", "m1", "m4"]  # the strongest, then the closer of the tied
    assert links.closest({"m3": 0.9}) == {"m2": 1.0, "m1": tied["m1"], "m3": tied["m3"]}
    assert GraphLinks(links=tied).closest({}) == tied  # no cap: all kept


async def test_fetch_linked_scores_by_cosine_and_drops_hidden_or_vectorless() -> None:
    class Points:
        async def get(
            self, tenant: str, ids: Sequence[str], with_vectors: bool = False
        ) -> list[ScoredPoint]:
            return [
                ScoredPoint("a", 0.0, {"state": "active"}, vector=[3.0, 4.0]),
                ScoredPoint("b", 0.0, {"state": "archived"}, vector=[1.0, 0.0]),
                ScoredPoint("c", 0.0, {"state": "active"}, vector=None),
                ScoredPoint("d", 0.0, {"state": "active"}, vector=[0.0, -2.0]),
            ]

    got = await fetch_linked(
        Points(),  # type: ignore[arg-type]
        "t",
        [1.0, 0.0],
        {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0},
        exclude={"e"},
        visible=lambda payload: payload["state"] == "active",
    )
    assert [(p.id, round(p.score, 6)) for p in got] == [("a", 0.6), ("d", 0.0)]


async def test_linker_caps_broad_entities_and_caches_query() -> None:
    ex = FixedExtractor([Entity("Caroline", "Person"), Entity("Sweden", "Place")])
    graph = FakeGraph((1000, [CAROLINE, SWEDEN]))
    linker = linker_of(graph, ex, max_df=50, max_df_share=0.05, ngrams=False)
    res = await linker.links("t", "Did Caroline go to Sweden?")
    assert res.ok and set(res.links) == {"m1", "m2"}  # 300 Caroline memories: too broad
    assert all(0.0 <= v <= 1.0 for v in res.links.values())
    again = await linker.links("t", "Did Caroline go to Sweden?")
    assert ex.calls == 1 and graph.calls == 2  # query entities cached, graph asked each time
    assert graph.counted == 1 and again.links == res.links  # the tenant's count is reused
    # The lookup says which of Sweden's memories also name Caroline: m2 links stronger.
    co = (("m2", "Person", "caroline"), ("m2", "Place", "sweden"))
    graph.answer = (1000, [CAROLINE, replace(SWEDEN, co=co)])
    both = await linker.links("t", "Did Caroline go to Sweden?")
    assert both.links["m2"] == 1.0 > both.links["m1"]
    assert graph.calls == 3  # still one lookup per recall
    assert set(res.timings()) == {"graph", "graph_ok", "graph_links"}

    none = linker_of(graph, FixedExtractor([Entity("May 2023", "Time")]), ngrams=False)
    empty = await none.links("t", "in May 2023")
    assert empty.ok and empty.links == {} and graph.calls == 3  # no lookup without entities


class KeyGraph(FakeGraph):
    """Answers like the real graph: only the asked keys it has come back."""

    def __init__(self, total: int, have: list[EntityLinks]) -> None:
        super().__init__((total, have))
        self.asked: list[str] = []

    async def entity_links(self, tenant: str, names: Sequence[str], **kw: Any) -> list[EntityLinks]:
        self.asked = list(names)
        return [e for e in await super().entity_links(tenant, names, **kw) if e.key in names]


async def test_linker_ngrams_match_graph_keys_without_extractor() -> None:
    ex = FixedExtractor([])
    graph = KeyGraph(1000, [CAROLINE, SWEDEN, ADOPTION])
    linker = linker_of(graph, ex, max_df=50, max_df_share=0.05)  # n-grams: the default
    res = await linker.links("t", "Did Caroline's adoptions go through in Sweden?")
    assert ex.calls == 0  # no parse on the recall path
    assert {"caroline", "sweden", "adoption"} <= set(graph.asked)  # "adoptions" -> "adoption"
    assert res.ok and set(res.links) == {"m1", "m2", "m3", "m4"}
    assert res.links["m2"] == max(res.links.values())  # names both rare entities


async def test_linker_type_words_link_co_mentions_of_the_type() -> None:
    jon = EntityLinks("jon", "Person", 300, tuple(f"j{i}" for i in range(300)), ("r1", "r2"))
    graph = KeyGraph(1000, [jon])
    linker = linker_of(graph, FixedExtractor([]), max_df=50, max_df_share=0.05)
    res = await linker.links("t", "Which cities has Jon visited?")
    assert graph.types == ["Place"]
    assert res.ok and set(res.links) == {"r1", "r2"}  # Jon's memories that name a place
    assert "type:Place" in res.entities
    # No type word, no typed links; typed links off, none either.
    assert (await linker.links("t", "What has Jon been up to?")).links == {}
    off = linker_of(graph, FixedExtractor([]), max_df=50, max_df_share=0.05, typed=False)
    assert (await off.links("t", "Which cities has Jon visited?")).links == {}
    assert graph.types == []
    # Too many such memories to be specific (over the df cap of 50): they link nothing.
    many = EntityLinks("jon", "Person", 300, (), tuple(f"j{i}" for i in range(60)))
    wide = linker_of(KeyGraph(1000, [many]), FixedExtractor([]), max_df=50)
    assert (await wide.links("t", "Which cities has Jon visited?")).links == {}


async def test_linker_degrades_on_timeout_error_and_cools_down() -> None:
    ex = FixedExtractor([Entity("Sweden", "Place")])
    graph = FakeGraph((10, [SWEDEN]), delay=1.0)
    linker = linker_of(graph, ex, timeout_s=0.05, cooldown_s=0.3, max_df_share=1.0)
    t0 = asyncio.get_running_loop().time()
    res = await linker.links("t", "Sweden?")
    assert not res.ok and res.reason == "timeout" and res.links == {}
    assert asyncio.get_running_loop().time() - t0 < 0.5
    # During the cooldown the graph is not asked at all.
    calls = graph.calls
    res = await linker.links("t", "Sweden?")
    assert not res.ok and res.reason == "cooldown" and graph.calls == calls
    await asyncio.sleep(0.35)
    graph.delay, graph.fail = 0.0, ConnectionError("graph down")
    res = await linker.links("t", "Sweden?")
    assert not res.ok and res.reason.startswith("error") and res.links == {}
    await asyncio.sleep(0.35)
    graph.fail = None
    assert (await linker.links("t", "Sweden?")).links == {"m1": 1.0, "m2": 1.0}


@pytest.mark.neo4j
async def test_links_against_real_graph() -> None:
    uri = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
    graph = Neo4jGraphStore(uri, "neo4j", os.environ.get("NEO4J_PASSWORD", "pcm-dev-password"))
    if not await graph.ping():
        await graph.close()
        if os.environ.get("PCM_ALLOW_SKIP_GRAPH") == "1":
            pytest.skip(f"no graph at {uri}")
        pytest.fail(f"no graph at {uri} (scripts/neo4j.sh start)")
    tenant = f"links-{uuid.uuid4().hex[:10]}"
    mel, pottery = Entity("Melanie", "Person"), Entity("pottery", "Concept")
    # m0, m1 name Melanie and pottery, m2 only pottery, the rest only Melanie (80 in all:
    # pottery's 3 stay under the df cap of 5% of them).
    facts = {0: [mel, pottery], 1: [mel, pottery], 2: [pottery]}
    items = [(tenant, f"m{i}", Extraction(facts.get(i, [mel]), [])) for i in range(80)]

    async def count(t: str) -> int:
        return (await graph.stats(t))["memories"]

    try:
        await graph.write_facts_many(items)
        for ngrams in (False, True):
            linker = GraphLinker(
                graph,
                FixedExtractor([mel, Entity("Pottery", "Concept")]),
                count=count,
                timeout_s=2.0,
                ngrams=ngrams,
            )
            res = await linker.links(tenant, "What did Melanie make in pottery class?")
            assert res.ok, res.reason
            assert set(res.links) == {"m0", "m1", "m2"}  # Melanie (79 of 80) is too broad
            # ...but of pottery's memories, those that also name her link stronger: the
            # lookup's own answer says so (one round trip).
            assert res.links["m0"] == res.links["m1"] == 1.0 > res.links["m2"] > 0.5
    finally:
        await graph.delete_memories(tenant, [m for _, m, _ in items])
        await graph.close()


def test_link_strengths_broad_entity_strengthens_co_mentions() -> None:
    broad = EntityLinks("caroline", "Person", 300, ())
    plain = link_strengths(1000, [broad, ADOPTION], max_links=10)
    also = {"m3": {("Person", "caroline")}, "c7": {("Person", "caroline")}}
    got = link_strengths(1000, [broad, ADOPTION], max_links=10, also=also)
    assert got["m3"] == 1.0 and got["m2"] == plain["m2"] < 1.0  # names both query entities
    assert "c7" not in got  # the broad entity alone still links nothing
