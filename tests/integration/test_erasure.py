"""Erasure end to end (issue 37, point 4): `DELETE /v1/memories?user_id=...` against the
real all-in-one server, then every store scanned for anything of the erased user: the
tenant's points (through the API, which reads the vector store), the graph server (its
memory nodes and the entity only that user named), and every key and stream of Redis.
Another user writes all the while and loses nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from tests.conftest import KEYS, NEO4J_URI, TEST_REDIS_URL, settle

NOW = datetime.now(UTC)
RUN = uuid.uuid4().hex[:8]
ERASED = f"erased-{RUN}"
KEPT = f"kept-{RUN}"
# A name only the erased user's memories state, so its graph entity is theirs alone.
NAME = f"Quirinus Vandermolen{RUN[:3]}"
TEXTS = [
    f"{NAME} adopted a greyhound called Pepper {RUN}.",
    f"{NAME} runs the Thursday chess club at the library {RUN}.",
    f"The allergy clinic told {NAME} to avoid shellfish {RUN}.",
    f"{NAME} booked flights to Lisbon for the spring conference {RUN}.",
]


async def _store_erased_user(c: httpx.AsyncClient) -> list[str]:
    """The erased user's memories: an episode that consolidation makes a record of, a
    pinned one, one stored with an Idempotency-Key; then a recall by that user."""
    ids = []
    for n, text in enumerate(TEXTS):
        r = await c.post(
            "/v1/memories",
            json={
                "text": text,
                "user_id": ERASED,
                "episode": f"ep-{RUN}",
                "created_at": (NOW - timedelta(days=2, minutes=10 - n)).isoformat(),
            },
            headers={"Idempotency-Key": f"erase-{RUN}-{n}"},
        )
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    r = await c.post(
        "/v1/memories", json={"text": f"{NAME} prefers aisle seats {RUN}.", "user_id": ERASED}
    )
    ids.append(r.json()["id"])
    assert (await c.patch(f"/v1/memories/{ids[-1]}", json={"pinned": True})).status_code == 200
    r = await c.post("/v1/recall", json={"query": f"What does {NAME} own?", "user_id": ERASED})
    assert r.status_code == 200 and r.json()["situational_context"], r.text
    return ids


async def _keep_writing(c: httpx.AsyncClient, stop: asyncio.Event) -> list[str]:
    """Another user's writes, one at a time, until `stop` (at least 10)."""
    ids: list[str] = []
    while not stop.is_set() or len(ids) < 10:
        r = await c.post(
            "/v1/memories",
            json={"text": f"Kept note {len(ids)} about the Oslo office {RUN}.", "user_id": KEPT},
        )
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    return ids


async def _all_points(c: httpx.AsyncClient) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    offset = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"offset": offset} if offset else {})}
        page = (await c.get("/v1/memories", params=params)).json()
        items += page["items"]
        offset = page["next_offset"]
        if offset is None:
            return items


async def _redis_dump(redis: Redis) -> dict[str, str]:
    """Every key of the test database with its whole value as text."""
    out: dict[str, str] = {}
    async for raw in redis.scan_iter(count=1000):
        key = raw.decode()
        kind = (await redis.type(raw)).decode()
        if kind == "string":
            value: Any = await redis.get(raw)
        elif kind == "hash":
            value = await redis.hgetall(raw)
        elif kind == "set":
            value = await redis.smembers(raw)
        elif kind == "zset":
            value = await redis.zrange(raw, 0, -1)
        elif kind == "list":
            value = await redis.lrange(raw, 0, -1)
        elif kind == "stream":
            value = await redis.xrange(raw)
        else:
            continue
        out[key] = repr(value)
    return out


async def test_erasing_a_user_leaves_no_trace_and_spares_the_others(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    erased_ids = await _store_erased_user(client_a)
    await settle(client_a)
    later = (NOW + timedelta(days=1)).isoformat()
    r = await client_a.post("/v1/jobs/consolidation", json={"now": later})
    assert r.status_code == 200, r.text
    stats = (await client_a.get("/v1/stats", params={"user_id": ERASED})).json()
    assert stats["episode_records"] == 1 and stats["memories"] == len(TEXTS) + 1, stats
    note = {"text": f"Tenant b note {RUN}", "user_id": ERASED}
    other = await client_b.post("/v1/memories", json=note)
    assert other.status_code == 201
    password = os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
    graph = Neo4jGraphStore(NEO4J_URI, "neo4j", password)
    tenant = KEYS["key-a"]
    await settle(client_a)
    assert await graph.existing_memories(tenant, erased_ids), "the facts to erase were extracted"

    stop = asyncio.Event()
    writer = asyncio.create_task(_keep_writing(client_a, stop))
    await asyncio.sleep(0.5)
    r = await client_a.delete("/v1/memories", params={"user_id": ERASED})
    stop.set()
    kept_ids = await writer
    assert r.status_code == 200, r.text
    job = r.json()
    assert job["status"] == "done" and not job["resumed"]
    erased = job["erased"]
    assert erased["memories"] == len(TEXTS) + 1 and erased["episode_records"] == 1, erased
    assert erased["graph_memories"] >= len(TEXTS) and erased["routine_memories"] >= 0
    assert erased["stream_entries"] > 0 and erased["redis_keys"] > 0, erased
    await settle(client_a)

    # The vector store: nothing of the user, every write of the other user.
    points = await _all_points(client_a)
    assert not [p for p in points if p.get("user_id") == ERASED or NAME in p["text"]]
    assert {p["id"] for p in points if p.get("user_id") == KEPT} == set(kept_ids)
    # (Another tenant's memory naming the same user is that tenant's: untouched.)
    assert (await client_b.get(f"/v1/memories/{other.json()['id']}")).status_code == 200

    # The graph: no memory node, and the entity only the erased user named is gone.
    assert not await graph.existing_memories(tenant, erased_ids)
    links = await graph.entity_links(tenant, [NAME], max_df=50)
    assert not links, links
    await graph.close()

    # Redis: no key or value holds the user's id, text or memory ids (tombstones hold ids
    # and times only: graph repair needs them).
    redis = Redis.from_url(TEST_REDIS_URL)
    dump = await _redis_dump(redis)
    await redis.aclose()
    marks = [ERASED, NAME, *erased_ids, *(t.split(" ", 3)[-1] for t in TEXTS)]
    found = {
        (k, m)
        for k, v in dump.items()
        if k != f"pcm:tombstones:{tenant}"
        for m in marks
        if m in k or m in v
    }
    assert not found, found


async def test_a_second_call_resumes_a_stopped_erasure(client_a: httpx.AsyncClient) -> None:
    user = f"resumed-{RUN}"
    ids = []
    for n in range(3):
        r = await client_a.post("/v1/memories", json={"text": f"Resume {n} {RUN}", "user_id": user})
        ids.append(r.json()["id"])
    # A run that stopped after erasing two memories: its record is still "running".
    digest = hashlib.sha256(json.dumps({"user_id": user}, sort_keys=True).encode()).hexdigest()
    key = f"pcm:erasure:{KEYS['key-a']}:{digest[:32]}"
    redis = Redis.from_url(TEST_REDIS_URL)
    await redis.hset(key, mapping={"id": "stopped-job", "status": "running", "memories": 2})
    r = await client_a.delete("/v1/memories", params={"user_id": user})
    assert r.status_code == 200, r.text
    assert r.json()["job_id"] == "stopped-job" and r.json()["resumed"]
    assert r.json()["erased"]["memories"] == 2 + 3
    assert (await redis.hget(key, "status")) == b"done"
    await redis.aclose()
    # Done: the same call again is a new job that finds nothing left.
    again = (await client_a.delete("/v1/memories", params={"user_id": user})).json()
    assert not again["resumed"] and again["erased"]["memories"] == 0
    for memory_id in ids:
        assert (await client_a.get(f"/v1/memories/{memory_id}")).status_code == 404


@pytest.mark.parametrize("params", [{}, {"user_id": ""}, {"project": "x" * 201}])
async def test_an_erasure_naming_nothing_is_refused(
    client_a: httpx.AsyncClient, params: dict[str, str]
) -> None:
    before = (await client_a.get("/v1/stats")).json()["memories"]
    r = await client_a.delete("/v1/memories", params=params)
    assert r.status_code == 422, r.text
    assert (await client_a.get("/v1/stats")).json()["memories"] == before
