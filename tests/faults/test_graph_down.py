"""The graph server stopped while clients write and recall: writes and recalls go on
(201 and 200, in bounded time), and once it is back extraction catches up: every memory
reaches the graph once, the ones written during the outage included."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import ServerProcess
from tests.faults.conftest import (
    AUTH,
    TENANT,
    PrivateGraph,
    distinct_text,
    drained,
    fault_env,
)

pytestmark = pytest.mark.faults

BEFORE, DURING = 8, 12


async def _write(c: httpx.AsyncClient, n: int) -> str:
    r = await c.post("/v1/memories", json={"text": distinct_text(n, "Graph case: ")})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def test_graph_down_ingest_and_recall_go_on_and_extraction_catches_up(
    tmp_path: Path, redis: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.redis_server import PrivateRedis

    assert isinstance(redis, PrivateRedis)
    # A graph server of this case's own: the suite's other cases keep theirs running.
    graph = PrivateGraph(tmp_path_factory.mktemp("arcadedb-down"))
    await graph.start()
    env = fault_env(
        tmp_path,
        redis.url,
        graph.uri,
        # The repair job republishes what the bus gave up on during the outage: here
        # within seconds instead of 15 minutes.
        PCM_REPAIR_INTERVAL_S="2",
        PCM_REPAIR_GRACE_S="1",
        PCM_JOB_INTERVAL_S="1",
    )
    server = ServerProcess(env, output=tmp_path / "pcm.log")
    url = await server.start()
    try:
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as c:
            ids = [await _write(c, n) for n in range(BEFORE)]
            await drained(c, within_s=60)
            # Stopped as an operator or a node drain stops it (SIGTERM). Killed instead
            # (SIGKILL), ArcadeDB's crash recovery once in three runs left a database that
            # answered every write with a ClientError for minutes: its own fault, not PCM's.
            await graph.stop()
            slowest = 0.0
            for n in range(BEFORE, BEFORE + DURING):
                started = time.monotonic()
                ids.append(await _write(c, n))
                r = await c.post("/v1/recall", json={"query": distinct_text(n, "Graph case: ")})
                slowest = max(slowest, time.monotonic() - started)
                assert r.status_code == 200, r.text
                found = [i["memory_id"] for i in r.json()["situational_context"]]
                assert ids[-1] in found
            await asyncio.sleep(5)  # the extractor's retries run out meanwhile
            down_s = time.monotonic()
            await graph.start()
            back = time.monotonic()
            down_s = back - down_s
            store = graph.store()
            try:
                deadline = time.monotonic() + 120
                while True:
                    have = await store.existing_memories(TENANT, ids)
                    if have == set(ids):
                        break
                    assert time.monotonic() < deadline, f"{len(set(ids) - have)} never extracted"
                    await asyncio.sleep(1)
                caught_up_s = time.monotonic() - back
                await drained(c, within_s=60)
                for memory_id in ids:
                    keys = [e.key for e in await store.entities_of(TENANT, memory_id)]
                    assert keys and len(keys) == len(set(keys)), (memory_id, keys)
            finally:
                await store.close()
        print(
            f"slowest write + recall with the graph down: {slowest:.2f} s; "
            f"graph restart {down_s:.1f} s; caught up {caught_up_s:.1f} s after"
        )
    finally:
        await server.stop()
        await graph.stop()
