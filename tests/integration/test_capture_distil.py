"""The predictive capture gate and sleep distillation (issue 36, items 4 and 5) through
the HTTP API of the real all-in-one server (Redis, Qdrant Edge, the graph server): a hook
capture the gate skips is said so and buffered, an explicit store is never gated, and the
consolidation job distils facts with their sources from settled episodes and from the
buffer, once each.

The server is shared by the session, so each test writes to a project of its own. The
tests talk through pcm-client."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pcm_client import AsyncPcmClient
from pcm_client.models import StoreResult
from tests.conftest import settle

DAYS_AGO = datetime.now(UTC) - timedelta(days=2)


def project() -> str:
    return f"distil-{uuid.uuid4().hex[:8]}"


async def store(c: AsyncPcmClient, p: str, text: str, **extra: Any) -> StoreResult:
    return await c.store(text, scope="project", project=p, **extra)


def sent(r: StoreResult) -> dict[str, Any]:
    """The answer as the server sent it."""
    return r.model_dump(mode="json", exclude_unset=True)


def capture(session: str) -> dict[str, Any]:
    return {"source": "hook", "metadata": {"hook": "UserPromptSubmit", "session_id": session}}


async def memories(c: AsyncPcmClient, p: str) -> list[dict[str, Any]]:
    return (await c.list_memories(project=p, limit=500)).items


async def facts(c: AsyncPcmClient, p: str) -> list[dict[str, Any]]:
    return [m for m in await memories(c, p) if m.get("kind") == "fact"]


async def consolidate(c: AsyncPcmClient) -> int:
    await settle(c)
    return int((await c.consolidate()).changed)


async def test_a_predictable_capture_is_skipped_buffered_and_distilled(
    pcm_a: AsyncPcmClient,
) -> None:
    p, session = project(), uuid.uuid4().hex
    text = "Bob Smith works at Microsoft and lives in Seattle."
    first = await store(pcm_a, p, text, **capture(session))
    assert first.status == "created" and first.id and (first.salience or 0) > 0.45, first
    stored = (await pcm_a.get(first.id)).model_extra or {}
    assert stored["salience"] == first.salience

    # The same capture again in its session predicts itself: skipped, and the answer says so.
    again = await store(pcm_a, p, text, **capture(session))
    assert again.status == "skipped" and again.reason == "low_salience", again
    assert again.id is None and again.salience is not None and again.salience < 0.45
    assert len(await memories(pcm_a, p)) == 1

    # Consolidation distils the buffered capture: facts sourced from it, not from a memory.
    await consolidate(pcm_a)
    found = {f["text"]: f for f in await facts(pcm_a, p)}
    assert {"Bob Smith works at Microsoft.", "Bob Smith lives in Seattle."} <= set(found)
    fact = found["Bob Smith works at Microsoft."]
    assert fact["source"] == "consolidation" and fact["project"] == p
    assert len(fact["sources"]) == 1 and fact["sources"] != [first.id]
    # The buffer was emptied: nothing more to distil from it.
    before = await facts(pcm_a, p)
    await consolidate(pcm_a)
    assert len(await facts(pcm_a, p)) == len(before)


async def test_an_explicit_store_is_never_gated(pcm_a: AsyncPcmClient) -> None:
    p, session = project(), uuid.uuid4().hex
    text = "The nightly export must finish before 06:00 UTC."
    assert (await store(pcm_a, p, text, **capture(session))).status == "created"
    r = await store(pcm_a, p, text, source="mcp", metadata={"session_id": session})
    assert sent(r) == {"id": r.id, "status": "reinforced"}  # no salience, no gate
    r = await store(pcm_a, p, "ok")
    assert r.status == "created", r


async def test_settled_episodes_give_facts_with_their_sources_once(
    pcm_a: AsyncPcmClient,
) -> None:
    p = project()
    episode = [
        "Alice Novak works at Acme and lives in Berlin.",
        "We talked about the quarterly planning.",
        "The offsite is in the mountains this year.",
    ]
    ids = []
    for n, text in enumerate(episode):
        at = DAYS_AGO + timedelta(minutes=n)
        r = await store(pcm_a, p, text, episode="ep-1", created_at=at)
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    await consolidate(pcm_a)
    found = {f["text"]: f for f in await facts(pcm_a, p)}
    fact = found["Alice Novak works at Acme."]
    assert fact["sources"] == [ids[0]] and fact["source"] == "consolidation"
    assert fact["state"] == "active"
    # The raw episode stays: every source memory is still there, as it was.
    kept = {m["id"]: m for m in await memories(pcm_a, p)}
    assert all(kept[i]["state"] == "active" for i in ids)

    # Running again distils nothing new, and a later episode stating the same fact adds its
    # source to the stored fact instead of storing it twice.
    assert len(await facts(pcm_a, p)) == len(found)
    await consolidate(pcm_a)
    assert len(await facts(pcm_a, p)) == len(found)
    later = []
    for n, text in enumerate(
        ["Alice Novak works at Acme in sales.", "Lunch was late.", "The train was full."]
    ):
        at = DAYS_AGO + timedelta(hours=3, minutes=n)
        r = await store(pcm_a, p, text, episode="ep-2", created_at=at)
        later.append(r.id)
    await consolidate(pcm_a)
    same = [f for f in await facts(pcm_a, p) if f["text"] == "Alice Novak works at Acme."]
    assert len(same) == 1
    assert same[0]["sources"] == [ids[0], later[0]]

    # A recall can deliver the fact as a memory of its own.
    out = await pcm_a.recall("Where does Alice Novak work?", project=p)
    texts = [m.text for m in out.situational_context]
    assert "Alice Novak works at Acme." in texts
