"""Retrieval feedback through the HTTP API on the real all-in-one server (issue 36, item 3):
recall answers carry a `recall_id`; feedback on it moves the memories' ranks for the same
query; the same feedback again changes nothing; another tenant's recall or memory is not
found; bad bodies are refused with nothing changed."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from pcm_cli.testing import settle

# One topic, several memories a query about deploys reaches at different ranks.
DEPLOYS = [
    "Deploys to production go out on Tuesdays and Thursdays after the standup.",
    "The deploy pipeline runs the integration tests before production deploys.",
    "Production deploys need a second reviewer on the release ticket.",
    "A deploy to production is rolled back with the rollback button in the console.",
    "Deploy windows to production are frozen during the December holidays.",
    "The staging deploy happens automatically after each merge to main.",
]
QUERY = "How do production deploys work?"
NOW = "2026-06-01T12:00:00Z"


def user() -> str:
    return f"fb-{uuid.uuid4().hex[:8]}"


async def store_all(c: httpx.AsyncClient, who: str) -> list[str]:
    ids = []
    for day, text in enumerate(DEPLOYS, start=1):
        # A day apart: each its own episode, so a recall delivers no neighbours of them.
        at = f"2026-05-{day:02d}T09:00:00Z"
        r = await c.post("/v1/memories", json={"text": text, "user_id": who, "created_at": at})
        assert r.status_code in (200, 201), r.text
        ids.append(r.json()["id"])
    await settle(c)
    return ids


async def recall(c: httpx.AsyncClient, who: str, k: int = 10, query: str = QUERY) -> dict[str, Any]:
    r = await c.post("/v1/recall", json={"query": query, "user_id": who, "k": k, "now": NOW})
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    assert out["recall_id"]
    return out


def order(out: dict[str, Any], mine: list[str]) -> list[str]:
    return [c["memory_id"] for c in out["situational_context"] if c["memory_id"] in mine]


async def test_helpful_raises_and_not_helpful_lowers_the_rank(client_a: httpx.AsyncClient) -> None:
    who = user()
    mine = await store_all(client_a, who)
    before = await recall(client_a, who)
    ranked = order(before, mine)
    assert len(ranked) >= 4, ranked
    top, low = ranked[0], ranked[-1]
    r = await client_a.post(
        f"/v1/recall/{before['recall_id']}/feedback",
        json={"helpful": [low], "not_helpful": [top]},
    )
    assert r.status_code == 200, r.text
    assert r.json()["changed"] == {low: "helpful", top: "not_helpful"}
    assert r.json()["reinforced"] == [low]
    after = order(await recall(client_a, who), mine)
    assert after.index(low) < ranked.index(low)
    assert after.index(top) > ranked.index(top)

    # The same feedback again changes nothing: the answer says so and the order holds.
    again = await client_a.post(
        f"/v1/recall/{before['recall_id']}/feedback",
        json={"helpful": [low], "not_helpful": [top]},
    )
    assert again.status_code == 200, again.text
    assert again.json()["changed"] == {}
    assert sorted(again.json()["unchanged"]) == sorted([low, top])
    assert again.json()["reinforced"] == []
    await settle(client_a)
    assert order(await recall(client_a, who), mine) == after

    # Another user of the tenant asking the same is not steered by this user's feedback.
    other = user()
    theirs = await store_all(client_a, other)
    plain = order(await recall(client_a, other), theirs)
    assert plain.index(theirs[mine.index(low)]) == ranked.index(low)


async def test_a_missed_memory_is_brought_up(client_a: httpx.AsyncClient) -> None:
    who = user()
    mine = await store_all(client_a, who)
    ranked = order(await recall(client_a, who), mine)
    first = await recall(client_a, who, k=2)
    shown = order(first, mine)
    missed = ranked[-1]
    assert missed not in shown
    r = await client_a.post(
        f"/v1/recall/{first['recall_id']}/feedback",
        json={"missed": [missed], "not_helpful": [shown[-1]]},
    )
    assert r.status_code == 200, r.text
    assert missed in order(await recall(client_a, who, k=2), mine)


async def test_memory_feedback_is_idempotent_and_wrong_asks_for_a_rewrite(
    client_a: httpx.AsyncClient,
) -> None:
    who = user()
    mine = await store_all(client_a, who)
    out = await recall(client_a, who)
    first = order(out, mine)[0]
    path = f"/v1/memories/{first}/feedback"
    r = await client_a.post(path, json={"signal": "helpful"})
    assert r.status_code == 200, r.text
    assert r.json()["changed"] == {first: "helpful"} and r.json()["reinforced"] == [first]
    r = await client_a.post(path, json={"signal": "helpful"})
    assert r.json()["changed"] == {} and r.json()["unchanged"] == [first]
    r = await client_a.post(path, json={"signal": "wrong"})
    assert r.status_code == 200 and r.json()["reconsolidation"] == [first]
    r = await client_a.post(path, json={"signal": "wrong"})
    assert r.json()["reconsolidation"] == []  # asked once
    # On a recall's cue: the memory must be one it delivered.
    r = await client_a.post(path, json={"signal": "not_helpful", "recall_id": out["recall_id"]})
    assert r.status_code == 200 and r.json()["changed"] == {first: "not_helpful"}
    assert r.json()["recall_id"] == out["recall_id"]


async def test_another_tenants_recall_and_memory_are_not_found(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    who = user()
    mine = await store_all(client_a, who)
    out = await recall(client_a, who)
    ranked = order(out, mine)
    r = await client_b.post(f"/v1/recall/{out['recall_id']}/feedback", json={"helpful": ranked[:1]})
    assert r.status_code == 404 and r.json()["error"] == "recall_not_found"
    r = await client_b.post(f"/v1/memories/{ranked[0]}/feedback", json={"signal": "not_helpful"})
    assert r.status_code == 404 and r.json()["error"] == "memory_not_found"
    # Nothing changed for tenant A: its own feedback is still new.
    r = await client_a.post(f"/v1/recall/{out['recall_id']}/feedback", json={"helpful": ranked[:1]})
    assert r.json()["changed"] == {ranked[0]: "helpful"}
    r = await client_a.post(f"/v1/memories/{ranked[0]}/feedback", json={"signal": "not_helpful"})
    assert r.json()["changed"] == {ranked[0]: "not_helpful"}


async def test_bad_feedback_is_refused_and_changes_nothing(client_a: httpx.AsyncClient) -> None:
    who = user()
    mine = await store_all(client_a, who)
    out = await recall(client_a, who, k=2)
    shown = order(out, mine)
    hidden = next(m for m in mine if m not in shown)
    path = f"/v1/recall/{out['recall_id']}/feedback"
    cases: list[tuple[dict[str, Any] | str, int, str]] = [
        ({}, 422, "invalid_request"),  # nothing named
        ({"helpful": [hidden]}, 422, "invalid_feedback"),  # not delivered
        ({"missed": [shown[0]]}, 422, "invalid_feedback"),  # delivered: not missed
        ({"helpful": [shown[0]], "not_helpful": [shown[0]]}, 422, "invalid_feedback"),
        ({"missed": [str(uuid.uuid4())]}, 422, "invalid_feedback"),  # no such memory
        ({"helpful": shown[:1], "extra": 1}, 422, "invalid_request"),
        ({"helpful": "not a list"}, 422, "invalid_request"),
        ("{not json", 400, "malformed_json"),
    ]
    for body, status, code in cases:
        if isinstance(body, str):
            r = await client_a.post(
                path, content=body, headers={"content-type": "application/json"}
            )
        else:
            r = await client_a.post(path, json=body)
        assert (r.status_code, r.json()["error"]) == (status, code), (body, r.text)
    # A mixed body with one bad id is refused whole: its good part was not applied.
    r = await client_a.post(path, json={"helpful": [shown[0], hidden]})
    assert r.status_code == 422
    r = await client_a.post(path, json={"helpful": [shown[0]]})
    assert r.json()["changed"] == {shown[0]: "helpful"}

    unknown = await client_a.post(f"/v1/recall/{uuid.uuid4().hex}/feedback", json={"helpful": mine})
    assert unknown.status_code == 404 and unknown.json()["error"] == "recall_not_found"
    for memory_id, body, status in [
        (str(uuid.uuid4()), {"signal": "helpful"}, 404),
        ("not-an-id", {"signal": "helpful"}, 404),
        (mine[0], {"signal": "great"}, 422),
        (mine[0], {}, 422),
        (hidden, {"signal": "helpful", "recall_id": out["recall_id"]}, 422),
        (mine[0], {"signal": "helpful", "recall_id": uuid.uuid4().hex}, 404),
    ]:
        r = await client_a.post(f"/v1/memories/{memory_id}/feedback", json=body)
        assert r.status_code == status, (memory_id, body, r.text)
