"""Export and import end to end (issue 37, point 3), against the real all-in-one server:
a user's memories exported from tenant A (history, pins, metadata, vectors), erased there,
imported into tenant B with their ids, recalled there as in A; a second import stores
nothing; the firewall and B's governance judge what comes in; A cannot take B's ids."""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

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


async def _export(c: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    r = await c.get("/v1/export", params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in r.text.splitlines()]


async def _import(c: httpx.AsyncClient, lines: list[dict[str, Any]]) -> httpx.Response:
    body = "".join(json.dumps(line) + "\n" for line in lines)
    return await c.post(
        "/v1/import", content=body, headers={"content-type": "application/x-ndjson"}
    )


async def _recall(c: httpx.AsyncClient) -> list[tuple[str, str]]:
    body = {"query": QUERY, "user_id": USER, "now": (NOW + timedelta(days=1)).isoformat()}
    r = await c.post("/v1/recall", json=body)
    assert r.status_code == 200, r.text
    return [(s["memory_id"], s["text"]) for s in r.json()["situational_context"]]


async def _write_user(c: httpx.AsyncClient) -> list[str]:
    ids = []
    for n, text in enumerate(TEXTS):
        at = (NOW - timedelta(days=3 - n)).isoformat()
        body = {"text": text, "user_id": USER, "created_at": at, "metadata": {"n": n}}
        r = await c.post("/v1/memories", json=body)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    new_text = TEXTS[2].replace("third Friday", "last Friday")
    r = await c.patch(f"/v1/memories/{ids[2]}", json={"text": new_text, "pinned": True})
    assert r.status_code == 200, r.text
    return ids


async def test_export_then_import_keeps_ids_history_and_recall(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    ids = await _write_user(client_a)
    await settle(client_a)
    before = await _recall(client_a)
    assert before and before[0][0] == ids[0], before

    lines = await _export(client_a, user_id=USER, vectors="true")
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
    taken = (await _import(client_b, lines)).json()
    assert taken["imported"] == 0 and {r["error"] for r in taken["refused"]} == {"id_taken"}

    assert (await client_a.delete("/v1/memories", params={"user_id": USER})).status_code == 200
    r = await _import(client_b, lines)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["imported"] == 3 and out["reembedded"] == 0 and not out["refused"], out
    again = (await _import(client_b, lines)).json()
    assert again["imported"] == 0 and again["existing"] == 3, again
    await settle(client_b)

    # The same memories, history and vectors in B, the same recall answer, rebuilt facts.
    back = {
        m["memory"]["id"]: m for m in (await _export(client_b, user_id=USER, vectors="true"))[1:]
    }
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

    assert own(await _recall(client_b)) == own(before)
    graph = Neo4jGraphStore(
        NEO4J_URI, "neo4j", os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
    )
    assert await graph.existing_memories(KEYS["key-b"], ids) == set(ids)
    await graph.close()
    assert (await client_b.delete("/v1/memories", params={"user_id": USER})).status_code == 200


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


async def test_import_goes_through_the_firewall_and_governance(
    client_b: httpx.AsyncClient,
) -> None:
    project = f"hooks-{RUN}"
    r = await client_b.put(
        "/v1/governance",
        json={"scope": "project", "project": project, "capture_mode": "hooks_only"},
    )
    assert r.status_code == 200, r.text
    lines = [
        _line(f"Reach Ilse at ilse.brandt@example.org {RUN}."),
        _line(f"the deploy key is AKIAIOSFODNN7EXAMPLE {RUN}"),
        _line(f"Release notes go out on Mondays {RUN}.", scope="project", project=project),
        _line(f"The office plants need water on Thursdays {RUN}."),
    ]
    r = await _import(client_b, lines)
    await client_b.delete("/v1/governance", params={"scope": "project", "project": project})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["imported"] == 2 and out["redacted"] == 1 and out["reembedded"] == 2, out
    assert [(x["line"], x["error"]) for x in out["refused"]] == [
        (1, "secret_detected"),
        (2, "capture_refused"),
    ]
    stored = (await client_b.get(f"/v1/memories/{lines[0]['memory']['id']}")).json()
    assert "ilse.brandt@example.org" not in stored["text"] and "REDACTED" in stored["text"]
    plain = (await client_b.get(f"/v1/memories/{lines[3]['memory']['id']}")).json()
    assert stored["text_hash"] != "x" and plain["text_hash"] != "x"
    for line in lines[1:3]:
        assert (await client_b.get(f"/v1/memories/{line['memory']['id']}")).status_code == 404
    assert (await client_b.delete("/v1/memories", params={"user_id": USER})).status_code == 200


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
    r = await _import(client_b, [ahead])
    assert r.status_code == 422 and r.json()["error"] == "invalid_request", r.text
    assert (await client_b.get("/v1/stats")).json()["memories"] == before
