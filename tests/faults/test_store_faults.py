"""A failing vector store and a poison event, on an all-in-one server in this process (so
that the failure can be injected into the real adapter): a write the store refused is
answered 503 with Retry-After and announces nothing, not even later through the outbox; an
event that fails every delivery ends in `pcm.dlq` while the events after it go through."""

from __future__ import annotations

import asyncio
import errno
import inspect
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from pcm_cli.testing import running_server
from pcm_common.messaging.events import STREAM_DLQ, STREAM_WRITTEN, MemoryWritten
from pcm_common.messaging.stream_batches import Outcome, decode_entry
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.redis.keys import OUTBOX_WRITTEN
from pcm_graph_extractor.handlers import GraphHandlers
from tests.faults.conftest import (
    AUTH,
    TENANT,
    PrivateGraph,
    distinct_text,
    drained,
    fault_env,
    stored_ids,
)
from tests.redis_server import private_redis

pytestmark = pytest.mark.faults

POISON = "POISON-PILL"
DELIVERIES = 3


class Faults:
    """What the injected faults do now."""

    def __init__(self) -> None:
        self.failing: set[str] = set()  # vector store operations that raise


FAULTS = Faults()


def _failing(name: str, real: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def op(self: EdgeVectorStore, *args: Any, **kwargs: Any) -> Any:
        if name in FAULTS.failing:
            # As the engine reports a disk that fails under it.
            raise OSError(errno.EIO, f"injected: {name} failed")
        return await real(self, *args, **kwargs)

    return op


async def _poisoned(
    real: Callable[[GraphHandlers, list[MemoryWritten]], Awaitable[list[Outcome]]],
    self: GraphHandlers,
    events: list[MemoryWritten],
) -> list[Outcome]:
    """The real extractor, except that an event with the marker fails every time."""
    good = [ev for ev in events if POISON not in ev.text]
    done = iter(await real(self, good) if good else [])
    return [RuntimeError("poison") if POISON in ev.text else next(done) for ev in events]


@pytest.fixture(scope="module")
def patched() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    for name, fn in inspect.getmembers(EdgeVectorStore, inspect.iscoroutinefunction):
        if not name.startswith("_"):
            mp.setattr(EdgeVectorStore, name, _failing(name, fn))
    real = GraphHandlers.process_batch

    async def process_batch(self: GraphHandlers, events: list[MemoryWritten]) -> list[Outcome]:
        return await _poisoned(real, self, events)

    mp.setattr(GraphHandlers, "process_batch", process_batch)
    saved = dict(os.environ)
    yield
    mp.undo()
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
async def server(
    patched: None, graph: PrivateGraph, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[str, Redis]]:
    tmp = tmp_path_factory.mktemp("store-faults")
    async with private_redis(tmp / "redis") as redis:
        env = fault_env(tmp, redis.url, graph.uri, PCM_MAX_DELIVERIES=str(DELIVERIES))
        client = Redis.from_url(redis.url)
        try:
            async with running_server(env) as url:
                yield url, client
        finally:
            await client.aclose()


async def _events_of(redis: Redis, stream: str) -> list[dict[str, Any]]:
    return [decode_entry(fields) for _, fields in await redis.xrange(stream)]


async def test_a_write_the_vector_store_refused_is_a_503_and_announces_nothing(
    server: tuple[str, Redis],
) -> None:
    url, redis = server
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as c:
        texts = {op: distinct_text(n, f"Refused by {op}: ") for n, op in enumerate(("upsert", "*"))}
        for op, text in texts.items():
            # The upsert alone (after the near-duplicate search), then every operation.
            FAULTS.failing = {"upsert"} if op == "upsert" else {"upsert", "search", "get"}
            try:
                r = await c.post("/v1/memories", json={"text": text})
            finally:
                FAULTS.failing = set()
            assert r.status_code == 503, r.text
            assert r.json()["error"] == "unavailable"
            assert int(r.headers["Retry-After"]) > 0
        # The outbox noted the refused upsert's memory before trying: once it has been
        # swept, it published nothing for it (the store does not hold it).
        deadline = time.monotonic() + 30
        while await redis.zcard(OUTBOX_WRITTEN):
            assert time.monotonic() < deadline, "the outbox was never swept"
            await asyncio.sleep(0.2)
        announced = {e.get("text") for e in await _events_of(redis, STREAM_WRITTEN)}
        assert not announced & set(texts.values()), "an event for a write that did not happen"
        listed = (await c.get("/v1/memories", params={"limit": 500})).json()["items"]
        assert not {m["text"] for m in listed} & set(texts.values())

        # The store back: the same write goes through and is announced.
        r = await c.post("/v1/memories", json={"text": texts["upsert"]})
        assert r.status_code == 201, r.text
        assert r.json()["id"] in await stored_ids(c)
        announced = {e.get("text") for e in await _events_of(redis, STREAM_WRITTEN)}
        assert texts["upsert"] in announced


async def test_a_poison_event_ends_in_the_dlq_without_blocking(
    server: tuple[str, Redis], graph: PrivateGraph
) -> None:
    url, redis = server
    # An entry no consumer can read at all, put there by another tool: dead on arrival.
    await redis.xadd(STREAM_WRITTEN, {"garbage": json.dumps({"not": "an event"})})
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as c:
        r = await c.post("/v1/memories", json={"text": distinct_text(1, f"{POISON} ")})
        assert r.status_code == 201, r.text
        poison_id = r.json()["id"]
        good = []
        for n in range(2, 8):
            r = await c.post("/v1/memories", json={"text": distinct_text(n, "After the pill: ")})
            assert r.status_code == 201, r.text
            good.append(r.json()["id"])
        store = graph.store()
        try:
            deadline = time.monotonic() + 60
            # The events after the poison are extracted while it is still being retried.
            while set(good) - await store.existing_memories(TENANT, good):
                assert time.monotonic() < deadline, "events behind the poison were blocked"
                await asyncio.sleep(0.2)
            await drained(c, within_s=60)
            assert poison_id not in await store.existing_memories(TENANT, [poison_id])
        finally:
            await store.close()
    # Dead letters are plain JSON fields (any tool reads them), not the broker's envelope.
    letters = [json.loads(fields[b"data"]) for _, fields in await redis.xrange(STREAM_DLQ)]
    poisoned = [d for d in letters if d["body"].get("memory_id") == poison_id]
    assert len(poisoned) == 1, letters
    assert poisoned[0]["deliveries"] == DELIVERIES
    assert poisoned[0]["group"] == "graph-extractor"
    assert any("garbage" in d["body"] or "__undecodable__" in d["body"] for d in letters)
