"""The embedded vector engine's time is counted by operation and by who asked (a consumer
group, else `http`), and the ingest benchmark reads it back from /metrics per segment."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from prometheus_client import generate_latest

from bench.common import store_seconds_between, store_seconds_in
from pcm_common.runtime.telemetry import CALLER, STORE_CALLS
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import SearchQuery, VectorPoint

DIM = 4


def _calls(op: str, caller: str) -> float:
    return STORE_CALLS.labels(op, caller)._value.get()


async def test_engine_calls_are_counted_by_operation_and_caller(tmp_path: Path) -> None:
    group = f"group-{uuid.uuid4().hex[:8]}"  # the registry is the process's: a fresh label
    store = EdgeVectorStore(tmp_path / "shard", dim=DIM)
    await store.ensure_collection()
    point = VectorPoint(id=str(uuid.uuid4()), vector=[1.0, 0, 0, 0], payload={"tenant": "t"})
    before = store_seconds_in(generate_latest().decode())
    http_searches = _calls("search_many:query_batch", "http")

    async def consumer() -> None:
        CALLER.set(group)  # as a stream consumer's task does (`stream_batches`)
        await store.upsert([point])
        await store.set_payload_many("t", [(point.id, {"n": 1})])
        await store.search_many([SearchQuery("t", [1.0, 0, 0, 0], limit=3)])

    try:
        await asyncio.create_task(consumer())
        await store.search_many([SearchQuery("t", [1.0, 0, 0, 0], limit=3)])  # no group
    finally:
        await store.close()
    ops = ("upsert:update", "set_payload:update", "search_many:query_batch")
    assert [_calls(op, group) for op in ops] == [1, 1, 1]
    # The point's owner was known from its upsert: no ownership read of the engine.
    assert _calls("set_payload:scroll", group) == 0
    assert _calls("search_many:query_batch", "http") == http_searches + 1
    spent = store_seconds_between(before, store_seconds_in(generate_latest().decode()))
    assert {f"{group} {op}" for op in ops} <= set(spent)
    assert all(v > 0 for v in spent.values())
    assert list(spent.values()) == sorted(spent.values(), reverse=True)
