"""Export and import end to end (issue 37, point 3), against the real all-in-one server:
a user's memories exported from tenant A (history, pins, metadata, vectors), erased there,
imported into tenant B with their ids, recalled there as in A; a second import stores
nothing; the firewall and B's governance judge what comes in; A cannot take B's ids.
Through pcm-client, except the refusals of bad import bodies and the export's media type
(the wire)."""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pcm_client import AsyncPcmClient, NotFound
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from tests.conftest import KEYS, NEO4J_URI, settle

RUN = uuid.uuid4().hex[:8]
USER = f"mover-{RUN}"
NOW = datetime.now(UTC)
TEXTS = [
    f"Marisol Ekwueme moved to Valparaiso in March {RUN}.",
    f"Marisol Ekwueme teaches Portuguese at the community college {RUN}.",
    f"The quarterly budget review is on the third Friday {RUN}.",
]
QUERY = "Where did Marisol Ekwueme move?"


async def _export(c: AsyncPcmClient, vectors: bool = False) -> list[dict[str, Any]]:
    return [line async for line in c.export(user_id=USER, vectors=vectors)]


async def _recall(c: AsyncPcmClient) -> list[tuple[str, str]]:
    out = await c.recall(QUERY, user_id=USER, now=NOW + timedelta(days=1))
    return [(s.memory_id, s.text) for s in out.situational_context]


async def _write_user(c: AsyncPcmClient) -> list[str]:
    ids = []
    for n, text in enumerate(TEXTS):
        r = await c.store(
            text, user_id=USER, created_at=NOW - timedelta(days=3 - n), metadata={"n": n}
        )
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    new_text = TEXTS[2].replace("third Friday", "last Friday")
    await c.update(ids[2], text=new_text, pinned=True)
    return ids


async def test_export_then_import_keeps_ids_history_and_recall(
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    ids = await _write_user(pcm_a)
    await settle(pcm_a)
    before = await _recall(pcm_a)
    assert before and before[0][0] == ids[0], before

    lines = await _export(pcm_a, vectors=True)
    header, memories = lines[0], lines[1:]
    assert header["kind"] == "header" and header["count"] == 3 and header["vectors"]
    by_id = {m["memory"]["id"]: m for m in memories}
    assert set(by_id) == set(ids)
    edited = by_id[ids[2]]["memory"]
    assert (
        edited["version"] == 2
        and edited["pinned"]
        and "third Friday" in edited["history"][0]["text"]
    )
    assert all(len(m["vector"]) == header["dim"] and "tenant" not in m["memory"] for m in memories)

    # The ids are tenant A's: B cannot take them.
    taken = await pcm_b.import_lines(lines)
    assert taken.imported == 0 and {r.error for r in taken.refused} == {"id_taken"}

    await pcm_a.erase(user_id=USER)
    out = await pcm_b.import_lines(lines)
    assert out.imported == 3 and out.reembedded == 0 and not out.refused, out
    again = await pcm_b.import_lines(lines)
    assert again.imported == 0 and again.existing == 3, again
    await settle(pcm_b)

    # The same memories, history and vectors in B, the same recall answer, rebuilt facts.
    back = {m["memory"]["id"]: m for m in (await _export(pcm_b, vectors=True))[1:]}
    assert back.keys() == by_id.keys()
    for memory_id, line in by_id.items():
        assert back[memory_id]["vector"] == line["vector"]
        for field in (
            "text",
            "created_at",
            "history",
            "version",
            "metadata",
            "episode",
            "strength",
        ):
            assert back[memory_id]["memory"].get(field) == line["memory"].get(field), field

    # Only the user's own memories: tenant-wide memories other tests wrote to A (or B)
    # are recalled beside them and were not exported.
    def own(hits: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [hit for hit in hits if hit[0] in by_id]

    assert own(await _recall(pcm_b)) == own(before)
    graph = Neo4jGraphStore(
        NEO4J_URI, "neo4j", os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
    )
    assert await graph.existing_memories(KEYS["key-b"], ids) == set(ids)
    await graph.close()
    await pcm_b.erase(user_id=USER)


def _line(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "memory",
        "memory": {
            "id": str(uuid.uuid4()),
            "text": text,
            "text_hash": "x",
            "created_at": NOW.isoformat(),
            "ingested_at": NOW.isoformat(),
            "strength": {"s_ref": 0.6, "t_ref": NOW.isoformat()},
            "user_id": USER,
            **fields,
        },
    }


async def test_import_goes_through_the_firewall_and_governance(pcm_b: AsyncPcmClient) -> None:
    project = f"hooks-{RUN}"
    await pcm_b.set_policy("project", project=project, capture_mode="hooks_only")
    lines = [
        _line(f"Reach Ilse at ilse.brandt@example.org {RUN}."),
        _line(f"the deploy key is AKIAIOSFODNN7EXAMPLE {RUN}"),
        _line(f"Release notes go out on Mondays {RUN}.", scope="project", project=project),
        _line(f"The office plants need water on Thursdays {RUN}."),
    ]
    try:
        out = await pcm_b.import_lines(lines)
    finally:
        await pcm_b.clear_policy("project", project=project)
    assert out.imported == 2 and out.redacted == 1 and out.reembedded == 2, out
    assert [(x.line, x.error) for x in out.refused] == [
        (1, "secret_detected"),
        (2, "capture_refused"),
    ]
    stored = await pcm_b.get(lines[0]["memory"]["id"])
    assert "ilse.brandt@example.org" not in stored.text and "REDACTED" in stored.text
    plain = await pcm_b.get(lines[3]["memory"]["id"])
    assert (stored.model_extra or {})["text_hash"] != "x"
    assert (plain.model_extra or {})["text_hash"] != "x"
    for line in lines[1:3]:
        with pytest.raises(NotFound):
            await pcm_b.get(line["memory"]["id"])
    await pcm_b.erase(user_id=USER)


async def test_a_bad_import_is_refused_whole(client_b: httpx.AsyncClient) -> None:
    before = (await client_b.get("/v1/stats")).json()["memories"]
    good = _line(f"A fine memory {RUN}.")
    for body in (
        json.dumps(good) + "\nnot json\n",
        json.dumps(good) + "\n" + json.dumps({"kind": "memory", "memory": {"id": "x"}}),
        "",
        json.dumps(_line("")) + "\n",
    ):
        r = await client_b.post("/v1/import", content=body)
        assert r.status_code == 422, (body[:80], r.text)
        assert r.json()["error"] == "invalid_import"
    r = await client_b.post("/v1/import", content=b"\xff\xfe")
    assert r.status_code == 400
    ahead = _line(f"A memory from next year {RUN}.")
    ahead["memory"]["created_at"] = (NOW + timedelta(days=400)).isoformat()
    r = await client_b.post(
        "/v1/import",
        content=json.dumps(ahead) + "\n",
        headers={"content-type": "application/x-ndjson"},
    )
    assert r.status_code == 422 and r.json()["error"] == "invalid_request", r.text
    assert (await client_b.get("/v1/stats")).json()["memories"] == before
    # An export is served as JSON Lines (pcm-client reads it line by line).
    r = await client_b.get("/v1/export", params={"user_id": USER})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
