"""Associative recall and the urgency charge through the HTTP API on real servers (Redis,
Qdrant Edge, the graph): `mode: "associative"` reaches memories of the seed's episode and
graph neighbourhood that focused recall leaves out, never another user's or tenant's; an
urgent query is charged, a calm one is not."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from pcm_client import AsyncPcmClient
from tests.conftest import settle

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUERY = "Which conference did Nadia Okafor attend in Lisbon?"
# One morning of Ann's, a turn a minute: the first answers the query, the others chat on.
ANN_DAY = [
    "Nadia Okafor flew to Lisbon for the Websummit conference.",
    "The coffee machine on the third floor is broken again.",
    "We moved the standup to 9:30 for the rest of the month.",
    "The new monitors arrived and look great.",
    "Somebody left an umbrella in the meeting room.",
    "The quarterly report template changed its fonts.",
    "Lunch today was a very good mushroom risotto.",
]
# Weeks later, another episode of Ann's: it names Nadia Okafor and Lisbon again.
ANN_LATER = "Nadia Okafor still talks about the pastel de nata she ate in Lisbon."


async def _store(c: AsyncPcmClient, text: str, **fields: Any) -> str:
    r = await c.store(text, **fields)
    assert r.status == "created" and r.id, r
    return r.id


async def _recall(c: AsyncPcmClient, query: str, **fields: Any) -> dict[str, Any]:
    """The answer as the server sent it."""
    return (await c.recall(query, **fields)).model_dump(mode="json", exclude_unset=True)


def _shown(body: dict[str, Any]) -> set[str]:
    items = [*body["situational_context"], *body["episode_context"], *body["asker_context"]]
    return {i["memory_id"] for i in items}


async def test_associative_reaches_what_focused_misses_and_stays_with_its_user(
    pcm_url: str, pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    project = f"assoc-{uuid.uuid4().hex[:8]}"
    owner = {"scope": "project", "project": project, "user_id": "ann"}
    day = f"day-{project}"
    ann = [
        await _store(
            pcm_a, t, episode=day, created_at=(START + timedelta(minutes=i)).isoformat(), **owner
        )
        for i, t in enumerate(ANN_DAY)
    ]
    later = await _store(
        pcm_a,
        ANN_LATER,
        episode=f"later-{project}",
        created_at=(START + timedelta(days=20)).isoformat(),
        **owner,
    )
    # Bob's memories: the same project and episode id, between Ann's turns, naming the same
    # people and places; and tenant B's, word for word Ann's.
    bob = [
        await _store(
            pcm_a,
            f"Bob's note {i}: Nadia Okafor sent photos from Lisbon.",
            episode=day,
            created_at=(START + timedelta(minutes=i, seconds=30)).isoformat(),
            **{**owner, "user_id": "bob"},
        )
        for i in range(len(ANN_DAY))
    ]
    other = [await _store(pcm_b, t, episode=day, **owner) for t in [*ANN_DAY, ANN_LATER]]
    await settle(pcm_a)
    await settle(pcm_b)

    ask = {
        "query": QUERY,
        "k": 1,
        "project": project,
        "user_id": "ann",
        "now": (START + timedelta(days=30)).isoformat(),
    }
    focused = await _recall(pcm_a, **ask)
    assoc = await _recall(pcm_a, **ask, mode="associative")
    assert focused["situational_context"][0]["memory_id"] == ann[0]
    assert focused["associations"] == [] and "[ASSOCIATIONS]" not in focused["prompt"]
    # The focused part is the same in both modes.
    assert _shown(assoc) == _shown(focused)
    assert assoc["prompt"].startswith(focused["prompt"])

    reached = {a["memory_id"]: a for a in assoc["associations"]}
    missed = (set(ann) | {later}) - _shown(focused)
    assert reached.keys() & missed, assoc["associations"]
    # Further along the morning than the episode context goes, and the later episode.
    assert any(reached.get(m, {}).get("via") == "episode" for m in ann[3:])
    assert later in reached and reached[later]["via"] in ("graph", "similar")
    for a in reached.values():
        assert 0.3 <= a["energy"] < 1.0 and a["hops"] >= 1
        assert a["text"] in assoc["prompt"].split("[ASSOCIATIONS]")[1]
    assert not reached.keys() & (set(bob) | set(other))

    # The typed client asks for the mode and reads the associations.
    async with AsyncPcmClient(pcm_url, "key-a") as pcm:
        typed = await pcm.recall(
            QUERY,
            k=1,
            project=project,
            user_id="ann",
            now=START + timedelta(days=30),
            mode="associative",
        )
    got = {a.memory_id for a in typed.associations}
    assert got & missed and not got & (set(bob) | set(other))


async def test_focused_and_associative_without_a_match(
    pcm_a: AsyncPcmClient, client_a: httpx.AsyncClient
) -> None:
    project = f"assoc-none-{uuid.uuid4().hex[:8]}"
    body = await _recall(pcm_a, query="anything", project=project, mode="associative")
    assert body["associations"] == []
    assert body["prompt"].endswith("[ASSOCIATIONS]\n- none")
    # An unknown mode is the wire's refusal (the typed client would not send it).
    r = await client_a.post("/v1/recall", json={"query": "anything", "mode": "dreamy"})
    assert r.status_code == 422, r.text


async def test_an_urgent_query_is_charged_and_a_calm_one_is_not(
    pcm_a: AsyncPcmClient,
) -> None:
    project = f"charge-{uuid.uuid4().hex[:8]}"
    await _store(
        pcm_a, "The API runs on three pods behind nginx.", scope="project", project=project
    )
    await settle(pcm_a)
    for query in ("the server is down", "prod is broken, customers can't log in"):
        body = await _recall(pcm_a, query=query, project=project)
        assert body["query_charge"] > 0, (query, body["query_affect"])
    for query in (
        "How should we structure the folders in the new frontend project?",
        "Which architecture trade-offs should we consider for the API in the long term, "
        "given the constraints on scaling and data consistency?",
    ):
        body = await _recall(pcm_a, query=query, project=project)
        assert body["query_charge"] == 0, (query, body["query_affect"])
