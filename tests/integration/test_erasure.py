"""Erasure end to end (issue 37, point 4): `DELETE /v1/memories?user_id=...` against the
real all-in-one server, then every store scanned for anything of the erased user: the
tenant's points (through the API, which reads the vector store), the graph server (its
memory nodes and the entity only that user named), and every key and stream of Redis.
Another user writes all the while and loses nothing. Through pcm-client, except the refusal
of an erasure that names nothing (a query the typed client would not send)."""

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

from pcm_client import AsyncPcmClient, NotFound
from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
from pcm_common.stores.redis import keys as rkeys
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


async def _store_erased_user(c: AsyncPcmClient) -> list[str]:
    """The erased user's memories: an episode that consolidation makes a record of, a
    pinned one, each stored with an Idempotency-Key; then a recall by that user."""
    ids = []
    for n, text in enumerate(TEXTS):
        r = await c.store(
            text,
            user_id=ERASED,
            episode=f"ep-{RUN}",
            created_at=NOW - timedelta(days=2, minutes=10 - n),
            idempotency_key=f"erase-{RUN}-{n}",
        )
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    r = await c.store(f"{NAME} prefers aisle seats {RUN}.", user_id=ERASED)
    assert r.id, r
    ids.append(r.id)
    assert (await c.pin(ids[-1])).pinned
    out = await c.recall(f"What does {NAME} own?", user_id=ERASED)
    assert out.situational_context, out
    return ids


async def _keep_writing(c: AsyncPcmClient, stop: asyncio.Event) -> list[str]:
    """Another user's writes, one at a time, until `stop` (at least 10)."""
    ids: list[str] = []
    while not stop.is_set() or len(ids) < 10:
        r = await c.store(f"Kept note {len(ids)} about the Oslo office {RUN}.", user_id=KEPT)
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    return ids


async def _all_points(c: AsyncPcmClient) -> list[dict[str, Any]]:
    return [m async for m in c.iter_memories(page_size=500)]


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
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    erased_ids = await _store_erased_user(pcm_a)
    await settle(pcm_a)
    await pcm_a.consolidate(NOW + timedelta(days=1))
    stats = await pcm_a.stats(user_id=ERASED)
    assert stats["episode_records"] == 1 and stats["memories"] == len(TEXTS) + 1, stats
    other = await pcm_b.store(f"Tenant b note {RUN}", user_id=ERASED)
    assert other.status == "created" and other.id
    password = os.environ.get("NEO4J_PASSWORD", "pcm-dev-password")
    graph = Neo4jGraphStore(NEO4J_URI, "neo4j", password)
    tenant = KEYS["key-a"]
    await settle(pcm_a)
    assert await graph.existing_memories(tenant, erased_ids), "the facts to erase were extracted"

    stop = asyncio.Event()
    writer = asyncio.create_task(_keep_writing(pcm_a, stop))
    await asyncio.sleep(0.5)
    try:
        job = await pcm_a.erase(user_id=ERASED)
    finally:
        stop.set()
    kept_ids = await writer
    assert job.status == "done" and not job.resumed
    erased = job.erased
    assert erased.memories == len(TEXTS) + 1 and erased.episode_records == 1, erased
    assert erased.graph_memories >= len(TEXTS) and erased.routine_memories >= 0
    assert erased.stream_entries > 0 and erased.redis_keys > 0, erased
    await settle(pcm_a)

    # The vector store: nothing of the user, every write of the other user.
    points = await _all_points(pcm_a)
    assert not [p for p in points if p.get("user_id") == ERASED or NAME in p["text"]]
    assert {p["id"] for p in points if p.get("user_id") == KEPT} == set(kept_ids)
    # (Another tenant's memory naming the same user is that tenant's: untouched.)
    assert (await pcm_b.get(other.id)).id == other.id

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
        if k != rkeys.tombstones(tenant)
        for m in marks
        if m in k or m in v
    }
    assert not found, found


async def test_a_second_call_resumes_a_stopped_erasure(pcm_a: AsyncPcmClient) -> None:
    user = f"resumed-{RUN}"
    ids = []
    for n in range(3):
        r = await pcm_a.store(f"Resume {n} {RUN}", user_id=user)
        assert r.id, r
        ids.append(r.id)
    # A run that stopped after erasing two memories: its record is still "running".
    digest = hashlib.sha256(json.dumps({"user_id": user}, sort_keys=True).encode()).hexdigest()
    key = rkeys.erasure(KEYS["key-a"], digest[:32])
    redis = Redis.from_url(TEST_REDIS_URL)
    await redis.hset(key, mapping={"id": "stopped-job", "status": "running", "memories": 2})
    job = await pcm_a.erase(user_id=user)
    assert job.job_id == "stopped-job" and job.resumed
    assert job.erased.memories == 2 + 3
    assert (await redis.hget(key, "status")) == b"done"
    await redis.aclose()
    # Done: the same call again is a new job that finds nothing left.
    again = await pcm_a.erase(user_id=user)
    assert not again.resumed and again.erased.memories == 0
    for memory_id in ids:
        with pytest.raises(NotFound):
            await pcm_a.get(memory_id)


@pytest.mark.parametrize("params", [{}, {"user_id": ""}, {"project": "x" * 201}])
async def test_an_erasure_naming_nothing_is_refused(
    client_a: httpx.AsyncClient, params: dict[str, str]
) -> None:
    before = (await client_a.get("/v1/stats")).json()["memories"]
    r = await client_a.delete("/v1/memories", params=params)
    assert r.status_code == 422, r.text
    assert (await client_a.get("/v1/stats")).json()["memories"] == before
