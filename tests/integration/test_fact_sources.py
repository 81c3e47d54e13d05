"""Distilled facts follow their sources' deletion (issue 36; `pcm_common.domain.fact_sources`,
`pcm_common.data.derived_facts`) through the HTTP API of the real all-in-one server (Redis,
Qdrant Edge, the graph server): a fact whose every source is deleted goes, by the API's
DELETE, an erasure or a scope's retention, superseded facts too, and recall no longer
delivers it; a fact that lost some sources keeps the others.

The server is shared by the session, so each test writes to a project (or user) of its
own. The tests talk through pcm-client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pcm_client import AsyncPcmClient, NotFound
from tests.conftest import settle

NOW = datetime.now(UTC)
DAYS_AGO = NOW - timedelta(days=2)
FILLER = ["We talked about the quarterly planning.", "The offsite is in the mountains."]


@pytest.fixture
async def project(pcm_a: AsyncPcmClient) -> AsyncIterator[str]:
    name = f"facts-{uuid.uuid4().hex[:8]}"
    yield name
    try:
        await pcm_a.clear_policy("project", project=name)
    except NotFound:
        pass  # the test set none


async def episode(
    c: AsyncPcmClient, p: str, name: str, first: str, at: datetime, **where: Any
) -> str:
    """An episode of three memories, the first stating `first`; returns its id."""
    where = where or {"scope": "project", "project": p}
    ids = []
    for n, text in enumerate([first, *FILLER]):
        r = await c.store(
            f"{text} ({name} of {p})" if n else text,
            episode=f"{name}-{p}",
            created_at=at + timedelta(minutes=n),
            **where,
        )
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    return ids[0]


async def facts(c: AsyncPcmClient, **where: Any) -> dict[str, dict[str, Any]]:
    """The facts there, by text (any state)."""
    items = [m async for m in c.iter_memories(page_size=500, **where)]
    return {m["text"]: m for m in items if m.get("kind") == "fact"}


async def consolidate(c: AsyncPcmClient) -> None:
    await settle(c)
    await c.consolidate()
    await settle(c)


async def delivered(c: AsyncPcmClient, query: str, p: str) -> list[str]:
    out = await c.recall(query, project=p)
    return [m.text for m in out.situational_context]


async def test_deleting_sources_trims_a_fact_then_deletes_it_and_recall_stops_delivering_it(
    pcm_a: AsyncPcmClient, project: str
) -> None:
    p = project
    a = await episode(pcm_a, p, "ep-1", "Alice Novak works at Acme and lives in Berlin.", DAYS_AGO)
    b = await episode(
        pcm_a, p, "ep-2", "Alice Novak works at Acme in sales.", DAYS_AGO + timedelta(hours=3)
    )
    await consolidate(pcm_a)
    found = await facts(pcm_a, project=p)
    works, lives = found["Alice Novak works at Acme."], found["Alice Novak lives in Berlin."]
    assert set(works["sources"]) == {a, b} and lives["sources"] == [a]
    assert "Alice Novak lives in Berlin." in await delivered(
        pcm_a, "Where does Alice Novak live?", p
    )

    # One source of two deleted: the fact keeps the other; the fact of that source alone goes.
    await pcm_a.delete(a)
    found = await facts(pcm_a, project=p)
    assert found["Alice Novak works at Acme."]["sources"] == [b]
    assert "Alice Novak lives in Berlin." not in found
    with pytest.raises(NotFound):
        await pcm_a.get(lives["id"])
    assert "Alice Novak lives in Berlin." not in await delivered(
        pcm_a, "Where does Alice Novak live?", p
    )

    # The last source deleted: the fact goes, and consolidating again brings nothing back.
    await pcm_a.delete(b)
    await consolidate(pcm_a)
    assert await facts(pcm_a, project=p) == {}
    assert "Alice Novak works at Acme." not in await delivered(
        pcm_a, "Where does Alice Novak work?", p
    )


async def test_a_superseded_fact_goes_with_its_source_and_the_newer_with_its_own(
    pcm_a: AsyncPcmClient, project: str
) -> None:
    p = project
    old = await episode(pcm_a, p, "ep-1", "Bruno Kessler lives in Berlin.", DAYS_AGO)
    await consolidate(pcm_a)
    new = await episode(
        pcm_a, p, "ep-2", "Bruno Kessler lives in Munich.", DAYS_AGO + timedelta(hours=3)
    )
    await consolidate(pcm_a)
    found = await facts(pcm_a, project=p)
    berlin = found["Bruno Kessler lives in Berlin."]
    munich = found["Bruno Kessler lives in Munich."]
    assert berlin["state"] == "superseded" and berlin["superseded_by"] == munich["id"]
    assert berlin["sources"] == [old] and munich["sources"] == [new]

    await pcm_a.delete(old)
    found = await facts(pcm_a, project=p)
    assert set(found) == {"Bruno Kessler lives in Munich."}
    assert found["Bruno Kessler lives in Munich."]["state"] == "active"
    await pcm_a.delete(new)
    assert await facts(pcm_a, project=p) == {}


async def test_erasing_a_user_erases_the_facts_drawn_from_their_memories(
    pcm_a: AsyncPcmClient,
) -> None:
    user = f"facts-user-{uuid.uuid4().hex[:8]}"
    where = {"user_id": user}
    await episode(pcm_a, user, "ep-1", "Carla Jensen works at Microsoft.", DAYS_AGO, **where)
    await consolidate(pcm_a)
    assert "Carla Jensen works at Microsoft." in await facts(pcm_a, user_id=user)

    job = await pcm_a.erase(user_id=user)
    assert job.erased.facts >= 1 and job.erased.memories == 1 + len(FILLER), job.erased
    await settle(pcm_a)
    everything = [m async for m in pcm_a.iter_memories(page_size=500)]
    assert not [m for m in everything if m.get("user_id") == user or "Carla Jensen" in m["text"]]
    out = await pcm_a.recall("Where does Carla Jensen work?", user_id=user)
    assert all("Carla Jensen" not in m.text for m in out.situational_context)


async def test_retention_deletes_the_facts_with_their_sources_and_dates_a_capture_fact_alone(
    pcm_a: AsyncPcmClient, project: str
) -> None:
    p, session = project, uuid.uuid4().hex
    long_ago = NOW - timedelta(days=40)
    await episode(pcm_a, p, "ep-1", "Dora Lind works at Acme.", long_ago)
    # A hook capture said twice in its session: the second is skipped and buffered, and its
    # fact has no stored source.
    hook = {"source": "hook", "metadata": {"hook": "UserPromptSubmit", "session_id": session}}
    said = "Emil Berg lives in Oslo."
    for status in ("created", "skipped"):
        r = await pcm_a.store(
            said, scope="project", project=p, created_at=long_ago + timedelta(hours=1), **hook
        )
        assert r.status == status, r
    await consolidate(pcm_a)
    found = await facts(pcm_a, project=p)
    assert {"Dora Lind works at Acme.", "Emil Berg lives in Oslo."} <= set(found)
    stored_ids = {m["id"] async for m in pcm_a.iter_memories(page_size=500, project=p)}
    assert not set(found["Emil Berg lives in Oslo."]["sources"]) & stored_ids

    await pcm_a.set_policy(scope="project", project=p, retention_days=30)
    assert (await pcm_a.run_job("governance", NOW)).changed >= 1 + len(FILLER) + 2
    assert await facts(pcm_a, project=p) == {}
    assert [m async for m in pcm_a.iter_memories(page_size=500, project=p)] == []
    assert (await pcm_a.run_job("governance", NOW)).changed == 0  # idempotent
