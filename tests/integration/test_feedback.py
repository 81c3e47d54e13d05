"""Retrieval feedback on the real all-in-one server (issue 36, item 3), through pcm-client:
recall answers carry a `recall_id`; feedback on it moves the memories' ranks for the same
query; the same feedback again changes nothing; another tenant's recall or memory is not
found; bad bodies (raw requests: the wire's refusals) are refused with nothing changed."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from pcm_cli.testing import settle
from pcm_client import AsyncPcmClient, NotFound
from pcm_client.models import RecallOut

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
NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def user() -> str:
    return f"fb-{uuid.uuid4().hex[:8]}"


async def store_all(c: AsyncPcmClient, who: str) -> list[str]:
    ids = []
    for day, text in enumerate(DEPLOYS, start=1):
        # A day apart: each its own episode, so a recall delivers no neighbours of them.
        at = datetime(2026, 5, day, 9, tzinfo=UTC)
        r = await c.store(text, user_id=who, created_at=at)
        assert r.id is not None, r
        ids.append(r.id)
    await settle(c)
    return ids


async def recall(c: AsyncPcmClient, who: str, k: int = 10, query: str = QUERY) -> RecallOut:
    out = await c.recall(query, user_id=who, k=k, now=NOW)
    assert out.recall_id
    return out


def order(out: RecallOut, mine: list[str]) -> list[str]:
    return [c.memory_id for c in out.situational_context if c.memory_id in mine]


async def test_helpful_raises_and_not_helpful_lowers_the_rank(pcm_a: AsyncPcmClient) -> None:
    who = user()
    mine = await store_all(pcm_a, who)
    before = await recall(pcm_a, who)
    assert before.recall_id
    ranked = order(before, mine)
    assert len(ranked) >= 4, ranked
    top, low = ranked[0], ranked[-1]
    r = await pcm_a.recall_feedback(before.recall_id, helpful=[low], not_helpful=[top])
    assert r.changed == {low: "helpful", top: "not_helpful"}
    assert r.reinforced == [low]
    after = order(await recall(pcm_a, who), mine)
    assert after.index(low) < ranked.index(low)
    assert after.index(top) > ranked.index(top)

    # The same feedback again changes nothing: the answer says so and the order holds.
    again = await pcm_a.recall_feedback(before.recall_id, helpful=[low], not_helpful=[top])
    assert again.changed == {}
    assert sorted(again.unchanged) == sorted([low, top])
    assert again.reinforced == []
    await settle(pcm_a)
    assert order(await recall(pcm_a, who), mine) == after

    # Another user of the tenant asking the same is not steered by this user's feedback.
    other = user()
    theirs = await store_all(pcm_a, other)
    plain = order(await recall(pcm_a, other), theirs)
    assert plain.index(theirs[mine.index(low)]) == ranked.index(low)


async def test_a_missed_memory_is_brought_up(pcm_a: AsyncPcmClient) -> None:
    who = user()
    mine = await store_all(pcm_a, who)
    ranked = order(await recall(pcm_a, who), mine)
    first = await recall(pcm_a, who, k=2)
    assert first.recall_id
    shown = order(first, mine)
    missed = ranked[-1]
    assert missed not in shown
    await pcm_a.recall_feedback(first.recall_id, missed=[missed], not_helpful=[shown[-1]])
    assert missed in order(await recall(pcm_a, who, k=2), mine)


async def test_memory_feedback_is_idempotent_and_wrong_asks_for_a_rewrite(
    pcm_a: AsyncPcmClient,
) -> None:
    who = user()
    mine = await store_all(pcm_a, who)
    out = await recall(pcm_a, who)
    first = order(out, mine)[0]
    r = await pcm_a.memory_feedback(first, "helpful")
    assert r.changed == {first: "helpful"} and r.reinforced == [first]
    r = await pcm_a.memory_feedback(first, "helpful")
    assert r.changed == {} and r.unchanged == [first]
    r = await pcm_a.memory_feedback(first, "wrong")
    assert r.reconsolidation == [first]
    r = await pcm_a.memory_feedback(first, "wrong")
    assert r.reconsolidation == []  # asked once
    # On a recall's cue: the memory must be one it delivered.
    r = await pcm_a.memory_feedback(first, "not_helpful", recall_id=out.recall_id)
    assert r.changed == {first: "not_helpful"}
    assert r.recall_id == out.recall_id


async def test_another_tenants_recall_and_memory_are_not_found(
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    who = user()
    mine = await store_all(pcm_a, who)
    out = await recall(pcm_a, who)
    assert out.recall_id
    ranked = order(out, mine)
    with pytest.raises(NotFound) as nf:
        await pcm_b.recall_feedback(out.recall_id, helpful=ranked[:1])
    assert nf.value.code == "recall_not_found"
    with pytest.raises(NotFound) as nf:
        await pcm_b.memory_feedback(ranked[0], "not_helpful")
    assert nf.value.code == "memory_not_found"
    # Nothing changed for tenant A: its own feedback is still new.
    r = await pcm_a.recall_feedback(out.recall_id, helpful=ranked[:1])
    assert r.changed == {ranked[0]: "helpful"}
    r = await pcm_a.memory_feedback(ranked[0], "not_helpful")
    assert r.changed == {ranked[0]: "not_helpful"}


async def test_bad_feedback_is_refused_and_changes_nothing(
    pcm_a: AsyncPcmClient, client_a: httpx.AsyncClient
) -> None:
    who = user()
    mine = await store_all(pcm_a, who)
    out = await recall(pcm_a, who, k=2)
    shown = order(out, mine)
    hidden = next(m for m in mine if m not in shown)
    # The refusals are the wire's: bodies the typed client would not send, sent raw.
    path = f"/v1/recall/{out.recall_id}/feedback"
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
        (hidden, {"signal": "helpful", "recall_id": out.recall_id}, 422),
        (mine[0], {"signal": "helpful", "recall_id": uuid.uuid4().hex}, 404),
    ]:
        r = await client_a.post(f"/v1/memories/{memory_id}/feedback", json=body)
        assert r.status_code == status, (memory_id, body, r.text)
