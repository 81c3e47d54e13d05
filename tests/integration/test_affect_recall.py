"""Affect tags end to end: ingest tags each memory, recall tags the query and a charged
query prefers memories of its state (pcm_common.domain.affect)."""

from __future__ import annotations

import uuid

from pcm_client import AsyncPcmClient
from pcm_client.models import Affect
from tests.conftest import settle
from tests.unit.test_affect import CRISIS, DESIGN, PANIC, PONDER, STACK


async def test_memories_and_queries_carry_affect(pcm_a: AsyncPcmClient) -> None:
    project = f"affect-{uuid.uuid4().hex[:8]}"
    ids = {}
    for name, text in (("crisis", CRISIS), ("stack", STACK), ("design", DESIGN)):
        r = await pcm_a.store(text, scope="project", project=project, episode=name)
        assert r.status == "created" and r.id, r
        ids[r.id] = name
    await settle(pcm_a)
    stored = {}
    for mid, name in ids.items():
        stored[name] = ((await pcm_a.get(mid)).model_extra or {})["affect"]
    assert stored["crisis"]["arousal"] >= 0.4 > stored["stack"]["arousal"]
    assert stored["design"]["complexity"] > stored["stack"]["complexity"]

    async def first(query: str) -> tuple[str, Affect]:
        out = await pcm_a.recall(query, project=project)
        assert out.query_affect is not None, out
        return ids[out.situational_context[0].memory_id], out.query_affect

    top, mood = await first(PANIC)
    assert top == "crisis" and mood.arousal > 0.5
    top, mood = await first(PONDER)
    assert top == "design" and mood.complexity > 0.5
    _, mood = await first("What is in our API stack?")
    assert mood.arousal < 0.5 and mood.complexity < 0.5
