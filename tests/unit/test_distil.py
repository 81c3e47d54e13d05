"""Distilled facts (`pcm_common.domain.distil`, `pcm_common.extract.facts`,
`pcm_sweeper.distil`) on the in-memory doubles, and the LLM path through litellm's
`mock_response`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import fakeredis
import pytest

from pcm_common.domain import distil
from pcm_common.extract.facts import Found, LlmFacts
from pcm_common.stores.graph.port import Entity, Relation
from pcm_common.stores.redis.capture_buffer import Buffered, CaptureBuffer
from pcm_common.stores.vectors import Filter
from pcm_common.testing import MemoryPorts
from pcm_sweeper.distil import Distiller

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
OWNER = ("", "project", "", "api")


def rel(a: str, kind: str, b: str) -> Relation:
    return Relation(Entity(a, "Person"), kind, Entity(b, "Place"))


def test_relations_read_as_sentences() -> None:
    assert distil.statement(rel("Bob Smith", "WORKS_AT", "Microsoft")) == (
        "Bob Smith works at Microsoft."
    )
    assert distil.statement(rel("Kafka", "IS_A", "event bus")) == "Kafka is an event bus."
    assert distil.statement(rel("Rex", "IS_A", "alsatian")) == "Rex is an alsatian."
    assert distil.statement(rel("a", "NOT_A_FAMILY", "b")) is None


def test_the_same_statement_is_one_fact_per_owner() -> None:
    a = distil.fact_id("t", OWNER, "Alice lives in Berlin.")
    assert a == distil.fact_id("t", OWNER, "  alice LIVES in   Berlin ")
    assert a != distil.fact_id("t", ("u1", "project", "", "api"), "Alice lives in Berlin.")
    assert a != distil.fact_id("t2", OWNER, "Alice lives in Berlin.")


def test_gather_merges_the_sources_of_one_statement() -> None:
    s1, s2 = distil.Source("m1", "x", 10.0), distil.Source("m2", "y", 20.0)
    out = distil.gather([("Alice lives in Berlin.", s1, None), ("alice lives in berlin", s2, None)])
    assert len(out) == 1 and out[0].sources == ["m1", "m2"] and out[0].latest_ts == 20.0


def test_a_single_valued_relation_with_another_value_replaces() -> None:
    assert distil.replaces(("alice", "LIVES_IN", "munich"), ["alice", "LIVES_IN", "berlin"])
    assert not distil.replaces(("alice", "LIVES_IN", "berlin"), ["alice", "LIVES_IN", "berlin"])
    assert not distil.replaces(("alice", "VISITED", "rome"), ["alice", "VISITED", "paris"])
    assert not distil.replaces(("bob", "LIVES_IN", "rome"), ["alice", "LIVES_IN", "paris"])


SOURCES = [
    distil.Source("m1", "Alice moved to Berlin in March.", 1.0),
    distil.Source("m2", "She works at Acme now.", 2.0),
]


async def test_llm_facts_through_litellm_mock_response() -> None:
    answer = {
        "facts": [
            {"text": "Alice lives in Berlin", "sources": [1]},
            {"text": "Alice works at Acme.", "sources": [1, 2, 2, 9]},
            {"text": "An uncited guess.", "sources": [7]},
        ]
    }
    llm = LlmFacts("openai/gpt-4o-mini", mock_response=json.dumps(answer))
    found = await llm.facts(SOURCES)
    assert [(t, s.id) for t, s, _ in found] == [
        ("Alice lives in Berlin.", "m1"),
        ("Alice works at Acme.", "m1"),
        ("Alice works at Acme.", "m2"),
    ]


async def test_an_llm_answer_that_is_not_the_json_asked_gives_no_facts() -> None:
    llm = LlmFacts("openai/gpt-4o-mini", mock_response="Sure! Alice lives in Berlin.")
    assert await llm.facts(SOURCES) == []


class Scripted:
    """A fact source that states what it is given (text -> statements)."""

    def __init__(self, facts: dict[str, list[tuple[str, tuple[str, str, str] | None]]]) -> None:
        self.table = facts

    async def facts(self, sources: Sequence[distil.Source]) -> list[Found]:
        return [(t, s, r) for s in sources for t, r in self.table.get(s.text, [])]


@pytest.fixture
def ports() -> MemoryPorts:
    return MemoryPorts(redis=fakeredis.FakeAsyncRedis())


def buffered(text: str) -> Buffered:
    return Buffered(
        text=text,
        user_id=None,
        scope="project",
        workspace="",
        project="api",
        created_at=NOW.isoformat(),
        salience=0.3,
    )


async def facts_of(ports: MemoryPorts) -> list[dict[str, object]]:
    points, _ = await ports.vectors.scroll("t", flt=Filter(must={"kind": "fact"}), limit=100)
    return [p.payload for p in points]


async def test_skipped_captures_are_distilled_once_and_a_duplicate_is_not_stored_twice(
    ports: MemoryPorts,
) -> None:
    source = Scripted(
        {
            "the api runs on port 8443 fyi": [("The API listens on port 8443.", None)],
            "yeah port 8443 for the api": [("the api listens on port 8443", None)],
        }
    )
    buffer = CaptureBuffer(ports.redis)
    distiller = Distiller(ports, lambda: source, buffer)
    first = buffered("the api runs on port 8443 fyi")
    await buffer.buffer("t", [first])
    assert await distiller.run("t", NOW, {}) == 1
    (fact,) = await facts_of(ports)
    assert fact["text"] == "The API listens on port 8443."
    assert fact["source"] == "consolidation" and fact["kind"] == "fact"
    assert fact["sources"] == [first.id] and fact["project"] == "api"
    assert await buffer.skipped("t") == []  # consumed

    # The same statement again (other words, another capture): its source joins the fact.
    second = buffered("yeah port 8443 for the api")
    await buffer.buffer("t", [second])
    assert await distiller.run("t", NOW, {}) == 1
    (fact,) = await facts_of(ports)
    assert fact["sources"] == [first.id, second.id]
    assert await distiller.run("t", NOW, {}) == 0  # nothing new: nothing written


async def test_a_newer_value_of_a_single_valued_relation_supersedes_the_fact(
    ports: MemoryPorts,
) -> None:
    source = Scripted(
        {
            "alice is in berlin": [("Alice lives in Berlin.", ("alice", "LIVES_IN", "berlin"))],
            "alice is in munich": [("Alice lives in Munich.", ("alice", "LIVES_IN", "munich"))],
        }
    )
    buffer = CaptureBuffer(ports.redis)
    distiller = Distiller(ports, lambda: source, buffer, duplicate_cos=0.99)
    await buffer.buffer("t", [buffered("alice is in berlin")])
    await distiller.run("t", NOW, {})
    await buffer.buffer("t", [buffered("alice is in munich")])
    await distiller.run("t", NOW, {})
    by_text = {str(f["text"]): f for f in await facts_of(ports)}
    old, new = by_text["Alice lives in Berlin."], by_text["Alice lives in Munich."]
    assert old["state"] == "superseded" and old["superseded_by"] == new["id"]
    assert new["state"] == "active" and new["supersedes"] == old["id"]


def test_facts_of_different_relations_are_never_rewordings_of_each_other() -> None:
    berlin = ("alice", "LIVES_IN", "berlin")
    assert distil.distinct(("alice", "LIVES_IN", "munich"), list(berlin))
    assert distil.distinct(("alice", "LIKES", "berlin"), list(berlin))
    assert not distil.distinct(berlin, list(berlin))
    # Without both relations (a model's statements) the cosine alone decides.
    assert not distil.distinct(None, list(berlin))
    assert not distil.distinct(berlin, None)
