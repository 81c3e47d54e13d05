"""Erasure's stream and key scrubbing (`pcm_common.data.erasure_scrub`) on a real Redis: the
entries naming an erased memory or asked by the erased user go from every stream (dead
letters too) and from the groups' pending lists; every other entry and key stays."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from pcm_common.data.erasure_scrub import Asker, scrub_keys, scrub_streams
from pcm_common.messaging.bus import ensure_groups
from pcm_common.messaging.events import (
    GROUP_GRAPH,
    STREAM_DLQ,
    STREAM_RECALLED,
    STREAM_WRITTEN,
)
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.keys import OUTBOX_CHANGED, OUTBOX_WRITTEN
from tests.conftest import TEST_REDIS

GONE, KEPT = str(uuid.uuid4()), str(uuid.uuid4())
EPISODE = "pcm:episode:" + rkeys.tenant_tag("t") + ":abc"


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    client = Redis.from_url(f"{TEST_REDIS}/13")
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


def _plain(body: dict[str, object]) -> dict[str, str]:
    return {"data": json.dumps(body)}


async def test_only_the_erased_entries_and_keys_go(redis: Redis) -> None:
    await ensure_groups(redis)
    written = {
        m: {"type": "memory.written", "tenant": "t", "memory_id": m, "text": m}
        for m in (GONE, KEPT)
    }
    # (Plain JSON fields: `decode_entry` reads them as it reads the broker's envelope.)
    for body in written.values():
        await redis.xadd(STREAM_WRITTEN, {k: str(v) for k, v in body.items()})
    asked = {"type": "memory.recalled", "tenant": "t", "items": [], "user_id": "u-gone"}
    other = {**asked, "user_id": "u-kept"}
    for body in (asked, other):
        await redis.xadd(STREAM_RECALLED, {"type": body["type"], "user_id": str(body["user_id"])})
    letter = {"stream": STREAM_WRITTEN, "group": GROUP_GRAPH, "body": written[GONE]}
    await redis.xadd(STREAM_DLQ, _plain(letter))
    await redis.xadd(STREAM_DLQ, _plain({**letter, "body": written[KEPT]}))
    # The graph-extractor read both written entries and has not acknowledged them.
    await redis.xreadgroup(GROUP_GRAPH, "c1", {STREAM_WRITTEN: ">"})

    removed = await scrub_streams(redis, {GONE}, Asker(user_id="u-gone"))

    assert removed == 3
    left = [e[1] for e in await redis.xrange(STREAM_WRITTEN)]
    assert [f[b"memory_id"].decode() for f in left] == [KEPT]
    assert [e[1][b"user_id"] for e in await redis.xrange(STREAM_RECALLED)] == [b"u-kept"]
    assert [GONE not in e[1][b"data"].decode() for e in await redis.xrange(STREAM_DLQ)] == [True]
    pending = await redis.xpending(STREAM_WRITTEN, GROUP_GRAPH)
    assert pending["pending"] == 1  # the kept entry only

    await redis.zadd(OUTBOX_WRITTEN, {json.dumps(["t", GONE]): 1, json.dumps(["t", KEPT]): 1})
    changed = {"tenant": "t", "memory_id": GONE, "change": "deleted"}
    await redis.zadd(
        OUTBOX_CHANGED, {json.dumps(changed): 1, json.dumps({**changed, "memory_id": KEPT}): 1}
    )
    await redis.set(rkeys.graph_republished("t", GONE), 1)
    await redis.set(rkeys.idempotency("t", "aa"), json.dumps({"status": 201, "body": {"id": GONE}}))
    await redis.set(rkeys.idempotency("t", "bb"), json.dumps({"status": 201, "body": {"id": KEPT}}))
    await redis.hset("pcm:applied:recalled:e1", mapping={GONE: "1", KEPT: "1"})
    await redis.set(EPISODE, "x")

    removed = await scrub_keys(redis, "t", {GONE}, [EPISODE])

    assert removed == 6  # outbox note, owed change, repair marker, answer, marker, episode
    assert await redis.zrange(OUTBOX_WRITTEN, 0, -1) == [json.dumps(["t", KEPT]).encode()]
    assert [KEPT in m.decode() for m in await redis.zrange(OUTBOX_CHANGED, 0, -1)] == [True]
    assert (
        await redis.exists(rkeys.graph_republished("t", GONE)) == 0
        and await redis.exists(rkeys.idempotency("t", "aa")) == 0
        and await redis.exists(EPISODE) == 0
    )
    assert await redis.exists(rkeys.idempotency("t", "bb")) == 1
    assert await redis.hkeys("pcm:applied:recalled:e1") == [KEPT.encode()]
