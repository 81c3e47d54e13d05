"""Affect tags end to end: ingest tags each memory, recall tags the query and a charged
query prefers memories of its state (pcm_common.domain.affect)."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import settle
from tests.unit.test_affect import CRISIS, DESIGN, PANIC, PONDER, STACK


async def test_memories_and_queries_carry_affect(client_a: httpx.AsyncClient) -> None:
    project = f"affect-{uuid.uuid4().hex[:8]}"
    ids = {}
    for name, text in (("crisis", CRISIS), ("stack", STACK), ("design", DESIGN)):
        r = await client_a.post(
            "/v1/memories",
            json={"text": text, "scope": "project", "project": project, "episode": name},
        )
        assert r.status_code == 201, r.text
        ids[r.json()["id"]] = name
    await settle(client_a)
    stored = {}
    for mid, name in ids.items():
        stored[name] = (await client_a.get(f"/v1/memories/{mid}")).json()["affect"]
    assert stored["crisis"]["arousal"] >= 0.4 > stored["stack"]["arousal"]
    assert stored["design"]["complexity"] > stored["stack"]["complexity"]

    async def first(query: str) -> tuple[str, dict[str, float]]:
        r = await client_a.post("/v1/recall", json={"query": query, "project": project})
        assert r.status_code == 200, r.text
        body = r.json()
        return ids[body["situational_context"][0]["memory_id"]], body["query_affect"]

    top, mood = await first(PANIC)
    assert top == "crisis" and mood["arousal"] > 0.5
    top, mood = await first(PONDER)
    assert top == "design" and mood["complexity"] > 0.5
    _, mood = await first("What is in our API stack?")
    assert mood["arousal"] < 0.5 and mood["complexity"] < 0.5
