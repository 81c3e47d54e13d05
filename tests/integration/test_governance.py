"""Scope governance end to end (DESIGN §6): capture modes and the capture gate at ingest,
retention and caps in the sweeper's `governance` job, against the real all-in-one server.

The server is shared by the session, so each test governs projects of its own and clears
its policies at the end."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import settle

NOW = datetime.now(UTC)


@pytest.fixture
async def project(client_a: httpx.AsyncClient) -> AsyncIterator[str]:
    name = f"gov-{uuid.uuid4().hex[:8]}"
    yield name
    await client_a.delete("/v1/governance", params={"scope": "project", "project": name})


async def put(c: httpx.AsyncClient, **policy: Any) -> dict[str, Any]:
    r = await c.put("/v1/governance", json=policy)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def store(c: httpx.AsyncClient, project: str, text: str, **extra: Any) -> httpx.Response:
    return await c.post(
        "/v1/memories", json={"text": text, "scope": "project", "project": project, **extra}
    )


async def ids_in(c: httpx.AsyncClient, project: str) -> set[str]:
    r = await c.get("/v1/memories", params={"project": project, "limit": 500})
    assert r.status_code == 200, r.text
    return {m["id"] for m in r.json()["items"]}


async def test_capture_modes_and_the_gate(client_a: httpx.AsyncClient, project: str) -> None:
    # Default mode (all): a hook's chatter is gated, its substance kept; explicit chatter kept.
    r = await store(client_a, project, "sounds good", source="hook")
    assert r.status_code == 200, r.text
    assert r.json() == {"id": None, "status": "skipped", "reason": "capture_gate"}
    r = await store(client_a, project, "The API gateway times out after 29 seconds.", source="hook")
    assert r.status_code == 201 and r.json()["status"] == "created", r.text
    r = await store(client_a, project, "sounds good")
    assert r.status_code == 201 and r.json()["status"] == "created", r.text
    assert len(await ids_in(client_a, project)) == 2

    # manual_only: hook captures are skipped, explicit stores kept.
    view = await put(client_a, scope="project", project=project, capture_mode="manual_only")
    assert view["capture_mode"] == "manual_only" and view["retention_days"] is None
    r = await store(
        client_a, project, "Staging deploys run from the release branch.", source="hook"
    )
    assert r.status_code == 200 and r.json()["reason"] == "capture_mode", r.text
    r = await store(client_a, project, "Staging deploys run from the release branch.", source="mcp")
    assert r.status_code == 201, r.text

    # hooks_only: an explicit store is refused (403) and nothing of its request is stored.
    await put(client_a, scope="project", project=project, capture_mode="hooks_only")
    before = await ids_in(client_a, project)
    r = await store(client_a, project, "Rotate the signing key every quarter.")
    assert r.status_code == 403 and r.json()["error"] == "capture_refused", r.text
    items = [
        {"text": "Hook: the nightly job failed on disk space.", "source": "hook"},
        {"text": "Explicit: the nightly job runs at 02:00."},
    ]
    batch = [{"scope": "project", "project": project, **i} for i in items]
    r = await client_a.post("/v1/memories:batch", json={"memories": batch})
    assert r.status_code == 403 and r.json()["detail"] == [
        {"index": 1, "capture_mode": "hooks_only"}
    ], r.text
    assert await ids_in(client_a, project) == before
    # The hook's part alone goes through; a gated item keeps its place in the results.
    r = await client_a.post(
        "/v1/memories:batch",
        json={"memories": [batch[0], {**batch[0], "text": "ok thanks"}]},
    )
    assert r.status_code == 201, r.text
    assert [x["status"] for x in r.json()["results"]] == ["created", "skipped"]

    # The policy in force, resolved for the project, and the listing.
    r = await client_a.get("/v1/governance", params={"scope": "project", "project": project})
    assert r.json()["effective"] == {
        "capture_mode": "hooks_only",
        "retention_days": None,
        "max_memories": None,
    }
    assert {"scope": "project", "workspace": "", "project": project} | {
        "capture_mode": "hooks_only",
        "retention_days": None,
        "max_memories": None,
    } in r.json()["policies"]


async def test_a_secret_in_a_gated_batch_names_its_place(
    client_a: httpx.AsyncClient, project: str
) -> None:
    batch = [
        {"text": "ok", "source": "hook"},
        {"text": "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "source": "hook"},
    ]
    r = await client_a.post(
        "/v1/memories:batch",
        json={"memories": [{"scope": "project", "project": project, **i} for i in batch]},
    )
    assert r.status_code == 422 and r.json()["error"] == "secret_detected", r.text
    assert [bad["index"] for bad in r.json()["detail"]] == [1]
    assert await ids_in(client_a, project) == set()


async def test_retention_deletes_what_expired_but_never_a_pin(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient, project: str
) -> None:
    old = (NOW - timedelta(days=90)).isoformat()
    expired = (await store(client_a, project, "The old VPN host was vpn1.", created_at=old)).json()
    pin = (
        await store(
            client_a, project, "Never deploy without a rollback plan.", created_at=old, pinned=True
        )
    ).json()
    fresh = (await store(client_a, project, "The VPN host is vpn2 now.")).json()
    # Restated yesterday: retention counts from when a memory was last stated.
    restated = "The build cache lives on the NAS in rack 3."
    kept = (await store(client_a, project, restated, created_at=old)).json()
    again = await store(
        client_a, project, restated, created_at=(NOW - timedelta(days=1)).isoformat()
    )
    assert again.json() == {"id": kept["id"], "status": "reinforced"}
    # An old episode, consolidated into a record: the record goes with its sources.
    session = [
        "Planned the Birch migration with Ines.",
        "Ines found 14 orphaned invoice rows in Birch.",
        "Fixed the Birch rows and reran the dry run.",
    ]
    for n, text in enumerate(session):
        at = (NOW - timedelta(days=90) + timedelta(minutes=5 * n)).isoformat()
        await store(client_a, project, text, created_at=at, episode=f"birch-{project}")
    # Another tenant's old memory in a project of the same name: not a's policy.
    theirs = await store(client_b, project, "Tenant b: the VPN host was vpn1.", created_at=old)
    await settle(client_a)
    r = await client_a.post("/v1/jobs/consolidation", json={"now": NOW.isoformat()})
    assert r.status_code == 200 and r.json()["changed"] >= 1, r.text
    await settle(client_a)
    r = await client_a.get("/v1/stats", params={"project": project})
    assert r.json()["episode_records"] == 1, r.text
    await put(client_a, scope="project", project=project, retention_days=30)

    r = await client_a.post("/v1/jobs/governance", json={"now": NOW.isoformat()})
    assert r.status_code == 200 and r.json()["changed"] == 4, r.text
    assert (await client_a.get(f"/v1/memories/{expired['id']}")).status_code == 404
    assert await ids_in(client_a, project) == {pin["id"], fresh["id"], kept["id"]}
    assert (await client_b.get(f"/v1/memories/{theirs.json()['id']}")).status_code == 200
    r = await client_a.post("/v1/jobs/governance", json={"now": NOW.isoformat()})
    assert r.json()["changed"] == 0  # idempotent
    # A simulated clock cannot run this job ahead of real time: refused as a write's or a
    # recall's would be (issue 33 D), and nothing more expires.
    later = (NOW + timedelta(days=400)).isoformat()
    r = await client_a.post("/v1/jobs/governance", json={"now": later})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    await client_b.delete(f"/v1/memories/{theirs.json()['id']}")


async def test_cap_archives_the_weakest_and_keeps_them_searchable(
    client_a: httpx.AsyncClient, project: str
) -> None:
    texts = {
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
        r = await store(client_a, project, text, importance=importance, episode=f"bike-{i}")
        ids[text] = r.json()["id"]
    await settle(client_a)
    await put(client_a, scope="project", project=project, max_memories=3)

    r = await client_a.post("/v1/jobs/governance", json={"now": NOW.isoformat()})
    assert r.status_code == 200 and r.json()["changed"] == 2, r.text
    states = {}
    for text, mid in ids.items():
        states[text] = (await client_a.get(f"/v1/memories/{mid}")).json()["state"]
    archived = {t for t, s in states.items() if s == "archived"}
    assert archived == {t for t, imp in texts.items() if imp == "low"}
    r = await client_a.post("/v1/jobs/governance", json={"now": NOW.isoformat()})
    assert r.json()["changed"] == 0
    r = await client_a.get("/v1/stats", params={"project": project})
    assert r.json() == {
        "memories": 5,
        "by_state": {"active": 3, "archived": 2, "superseded": 0},
        "pinned": 0,
        "episode_records": 0,
    }

    # Archived by the cap, not deleted: out of the active set, still found by recall.
    r = await client_a.get("/v1/memories", params={"project": project, "state": "active"})
    assert {m["text"] for m in r.json()["items"]} == set(texts) - archived
    query = {"query": "What colour is Ilse's bike frame?", "project": project}
    red = ids["Ilse's bike has a red frame."]
    r = await client_a.post("/v1/recall", json={**query, "include_archived": True})
    assert red in {m["memory_id"] for m in r.json()["situational_context"]}


async def test_policies_are_per_tenant_and_bad_ones_are_refused(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient, project: str
) -> None:
    await put(client_a, scope="project", project=project, capture_mode="manual_only")
    listed = (await client_b.get("/v1/governance")).json()["policies"]
    assert all(p["project"] != project for p in listed)
    # Tenant b's hook captures in a project of the same name are not governed by a's policy.
    r = await store(client_b, project, "Tenant b keeps its build logs for a week.", source="hook")
    assert r.status_code == 201, r.text
    await client_b.delete(f"/v1/memories/{r.json()['id']}")

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
    r = await store(client_a, project, "Pretending to be a record.", source="consolidation")
    assert r.status_code == 422, r.text
