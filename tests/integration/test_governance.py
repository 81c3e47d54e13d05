"""Scope governance end to end (DESIGN §6): capture modes and the capture gate at ingest,
retention and caps in the sweeper's `governance` job, against the real all-in-one server.

The server is shared by the session, so each test governs projects of its own and clears
its policies at the end. The tests talk through pcm-client, except the refusals of bad
policies, which are about the wire (raw requests the typed client would not send)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pcm_client import AsyncPcmClient, CaptureRefused, NotFound, SecretDetected, ValidationError
from pcm_client.models import StoreResult
from tests.conftest import settle

NOW = datetime.now(UTC)


@pytest.fixture
async def project(pcm_a: AsyncPcmClient) -> AsyncIterator[str]:
    name = f"gov-{uuid.uuid4().hex[:8]}"
    yield name
    try:
        await pcm_a.clear_policy("project", project=name)
    except NotFound:
        pass  # the test set none


async def put(c: AsyncPcmClient, **policy: Any) -> dict[str, Any]:
    return await c.set_policy(**policy)


async def store(c: AsyncPcmClient, project: str, text: str, **extra: Any) -> StoreResult:
    return await c.store(text, scope="project", project=project, **extra)


def sent(res: StoreResult) -> dict[str, Any]:
    """The answer as the server sent it."""
    return res.model_dump(mode="json", exclude_unset=True)


async def ids_in(c: AsyncPcmClient, project: str) -> set[str]:
    page = await c.list_memories(project=project, limit=500)
    return {m["id"] for m in page.items}


async def test_capture_modes_and_the_gate(pcm_a: AsyncPcmClient, project: str) -> None:
    # Default mode (all): a hook's chatter is gated, its substance kept; explicit chatter kept.
    r = await store(pcm_a, project, "sounds good", source="hook")
    assert sent(r) == {"id": None, "status": "skipped", "reason": "capture_gate"}
    r = await store(pcm_a, project, "The API gateway times out after 29 seconds.", source="hook")
    assert r.status == "created", r
    r = await store(pcm_a, project, "sounds good")
    assert r.status == "created", r
    assert len(await ids_in(pcm_a, project)) == 2

    # manual_only: hook captures are skipped, explicit stores kept.
    view = await put(pcm_a, scope="project", project=project, capture_mode="manual_only")
    assert view["capture_mode"] == "manual_only" and view["retention_days"] is None
    r = await store(pcm_a, project, "Staging deploys run from the release branch.", source="hook")
    assert r.status == "skipped" and r.reason == "capture_mode", r
    r = await store(pcm_a, project, "Staging deploys run from the release branch.", source="mcp")
    assert r.status == "created", r

    # hooks_only: an explicit store is refused (403) and nothing of its request is stored.
    await put(pcm_a, scope="project", project=project, capture_mode="hooks_only")
    before = await ids_in(pcm_a, project)
    with pytest.raises(CaptureRefused):
        await store(pcm_a, project, "Rotate the signing key every quarter.")
    items = [
        {"text": "Hook: the nightly job failed on disk space.", "source": "hook"},
        {"text": "Explicit: the nightly job runs at 02:00."},
    ]
    batch = [{"scope": "project", "project": project, **i} for i in items]
    with pytest.raises(CaptureRefused) as refused:
        await pcm_a.store_batch(batch)
    assert refused.value.status == 403
    assert refused.value.detail == [{"index": 1, "capture_mode": "hooks_only"}]
    assert await ids_in(pcm_a, project) == before
    # The hook's part alone goes through; a gated item keeps its place in the results.
    out = await pcm_a.store_batch([batch[0], {**batch[0], "text": "ok thanks"}])
    assert [x.status for x in out.results] == ["created", "skipped"]

    # The policy in force, resolved for the project, and the listing.
    view = await pcm_a.policies("project", project=project)
    assert view["effective"] == {
        "capture_mode": "hooks_only",
        "retention_days": None,
        "max_memories": None,
    }
    assert {"scope": "project", "workspace": "", "project": project} | {
        "capture_mode": "hooks_only",
        "retention_days": None,
        "max_memories": None,
    } in view["policies"]


async def test_a_secret_in_a_gated_batch_names_its_place(
    pcm_a: AsyncPcmClient, project: str
) -> None:
    batch = [
        {"text": "ok", "source": "hook"},
        {"text": "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "source": "hook"},
    ]
    with pytest.raises(SecretDetected) as refused:
        await pcm_a.store_batch([{"scope": "project", "project": project, **i} for i in batch])
    assert [bad["index"] for bad in refused.value.detail] == [1]
    assert await ids_in(pcm_a, project) == set()


async def test_retention_deletes_what_expired_but_never_a_pin(
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient, project: str
) -> None:
    old = NOW - timedelta(days=90)
    expired = await store(pcm_a, project, "The old VPN host was vpn1.", created_at=old)
    pin = await store(
        pcm_a, project, "Never deploy without a rollback plan.", created_at=old, pinned=True
    )
    fresh = await store(pcm_a, project, "The VPN host is vpn2 now.")
    # Restated yesterday: retention counts from when a memory was last stated.
    restated = "The build cache lives on the NAS in rack 3."
    kept = await store(pcm_a, project, restated, created_at=old)
    again = await store(pcm_a, project, restated, created_at=NOW - timedelta(days=1))
    assert sent(again) == {"id": kept.id, "status": "reinforced"}
    # An old episode, consolidated into a record: the record goes with its sources.
    session = [
        "Planned the Birch migration with Ines.",
        "Ines found 14 orphaned invoice rows in Birch.",
        "Fixed the Birch rows and reran the dry run.",
    ]
    for n, text in enumerate(session):
        at = NOW - timedelta(days=90) + timedelta(minutes=5 * n)
        await store(pcm_a, project, text, created_at=at, episode=f"birch-{project}")
    # Another tenant's old memory in a project of the same name: not a's policy.
    theirs = await store(pcm_b, project, "Tenant b: the VPN host was vpn1.", created_at=old)
    assert expired.id and pin.id and fresh.id and kept.id and theirs.id
    await settle(pcm_a)
    assert (await pcm_a.consolidate(NOW)).changed >= 1
    await settle(pcm_a)
    assert (await pcm_a.stats(project=project))["episode_records"] == 1
    await put(pcm_a, scope="project", project=project, retention_days=30)

    assert (await pcm_a.run_job("governance", NOW)).changed == 4
    with pytest.raises(NotFound):
        await pcm_a.get(expired.id)
    assert await ids_in(pcm_a, project) == {pin.id, fresh.id, kept.id}
    assert (await pcm_b.get(theirs.id)).id == theirs.id
    assert (await pcm_a.run_job("governance", NOW)).changed == 0  # idempotent
    # A simulated clock cannot run this job ahead of real time: refused as a write's or a
    # recall's would be (issue 33 D), and nothing more expires.
    with pytest.raises(ValidationError) as refused:
        await pcm_a.run_job("governance", NOW + timedelta(days=400))
    assert refused.value.code == "invalid_request"
    await pcm_b.delete(theirs.id)


async def test_cap_archives_the_weakest_and_keeps_them_searchable(
    pcm_a: AsyncPcmClient, project: str
) -> None:
    texts: dict[str, Any] = {
        "Ilse's bike has a red frame.": "low",
        "Ilse's bike lock code is written in her notebook.": "low",
        "Ilse commutes by bike on Tuesdays.": "normal",
        "Ilse must not cycle on the highway shoulder.": "high",
        "Ilse's bike was serviced at Spokes in May.": "normal",
    }
    ids = {}
    # Episodes of their own: an archived memory next to a recalled one in the same episode
    # comes back as its context (reactivation), which is not what this test looks at.
    for i, (text, importance) in enumerate(texts.items()):
        r = await store(pcm_a, project, text, importance=importance, episode=f"bike-{i}")
        assert r.id is not None
        ids[text] = r.id
    await settle(pcm_a)
    await put(pcm_a, scope="project", project=project, max_memories=3)

    assert (await pcm_a.run_job("governance", NOW)).changed == 2
    states = {}
    for text, mid in ids.items():
        states[text] = (await pcm_a.get(mid)).state
    archived = {t for t, s in states.items() if s == "archived"}
    assert archived == {t for t, imp in texts.items() if imp == "low"}
    assert (await pcm_a.run_job("governance", NOW)).changed == 0
    assert await pcm_a.stats(project=project) == {
        "memories": 5,
        "by_state": {"active": 3, "archived": 2, "superseded": 0},
        "pinned": 0,
        "episode_records": 0,
    }

    # Archived by the cap, not deleted: out of the active set, still found by recall.
    page = await pcm_a.list_memories(project=project, state="active")
    assert {m["text"] for m in page.items} == set(texts) - archived
    red = ids["Ilse's bike has a red frame."]
    r = await pcm_a.recall(
        "What colour is Ilse's bike frame?", project=project, include_archived=True
    )
    assert red in {m.memory_id for m in r.situational_context}


async def test_policies_are_per_tenant_and_bad_ones_are_refused(
    pcm_a: AsyncPcmClient,
    pcm_b: AsyncPcmClient,
    client_a: httpx.AsyncClient,
    project: str,
) -> None:
    await put(pcm_a, scope="project", project=project, capture_mode="manual_only")
    listed = (await pcm_b.policies())["policies"]
    assert all(p["project"] != project for p in listed)
    # Tenant b's hook captures in a project of the same name are not governed by a's policy.
    r = await store(pcm_b, project, "Tenant b keeps its build logs for a week.", source="hook")
    assert r.status == "created" and r.id is not None, r
    await pcm_b.delete(r.id)

    # The refusals are the wire's: bodies and queries the typed client would not send.
    for bad in (
        {"scope": "project"},
        {"scope": "project", "project": project, "retention_days": 0},
        {"scope": "project", "project": project, "capture_mode": "sometimes"},
        {"scope": "global", "project": project},
        {"scope": "project", "project": project, "max_memories": -1},
        {"scope": "project", "project": project, "colour": "blue"},
    ):
        r = await client_a.put("/v1/governance", json=bad)
        assert r.status_code == 422, (bad, r.text)
    r = await client_a.get("/v1/governance", params={"scope": "project"})
    assert r.status_code == 422
    r = await client_a.delete("/v1/governance", params={"scope": "project", "project": "nope"})
    assert r.status_code == 404 and r.json()["error"] == "policy_not_found"
    r = await client_a.delete("/v1/governance", params={"scope": "workspace"})
    assert r.status_code == 422
    # The bad requests changed nothing.
    r = await client_a.get("/v1/governance", params={"scope": "project", "project": project})
    assert r.json()["effective"]["capture_mode"] == "manual_only"
    assert (await client_a.get("/v1/governance")).status_code == 200
    async with httpx.AsyncClient(base_url=str(client_a.base_url)) as anonymous:
        assert (await anonymous.get("/v1/governance")).status_code == 401
    # Episode records are PCM's own: a client cannot write one.
    r = await client_a.post(
        "/v1/memories",
        json={
            "text": "Pretending to be a record.",
            "scope": "project",
            "project": project,
            "source": "consolidation",
        },
    )
    assert r.status_code == 422, r.text
