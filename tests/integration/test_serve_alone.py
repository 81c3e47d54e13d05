"""`pcm serve <service>` runs each service alone, against REDIS_URL, the Qdrant Edge path
and NEO4J_URI: ingest writes, graph-extractor and sweeper catch up in their own processes,
recall answers from the same store."""

from __future__ import annotations

import asyncio
import os
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from pcm_cli.testing import server_process
from pcm_common.messaging.bus import group_backlogs, pipeline_status
from tests.conftest import KEYS, NEO4J_URI, TEST_REDIS, service_env

pytestmark = pytest.mark.slow


def serve(service: str, env: dict[str, str]) -> AbstractAsyncContextManager[str]:
    return server_process(env, ("serve", service, "--host", "127.0.0.1"), flush_redis=False)


async def wait_groups(redis: Redis, *groups: str) -> None:
    for _ in range(600):
        status = await pipeline_status(redis)
        left = sum(n for name, n in group_backlogs(status).items() if name in groups)
        if left == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"groups {groups} did not catch up: {status}")


async def test_each_service_runs_alone(tmp_path: Path) -> None:
    redis_url = f"{TEST_REDIS}/12"
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    env = {**os.environ, **service_env(tmp_path, redis_url)}
    auth = {"Authorization": "Bearer key-a"}
    try:
        async with serve("ingest", env) as url:
            async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as c:
                r = await c.post(
                    "/v1/memories", json={"text": "Alice moved to Lisbon to work for Siemens."}
                )
                assert r.status_code == 201, r.text
                mid = r.json()["id"]
        async with serve("graph-extractor", env):
            await wait_groups(redis, "graph-extractor")
        from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore

        graph = Neo4jGraphStore(NEO4J_URI, "neo4j", "pcm-dev-password")
        try:
            names = {e.name for e in await graph.entities_of(KEYS["key-a"], mid)}
        finally:
            await graph.close()
        assert {"Alice", "Lisbon", "Siemens"} <= names

        async with serve("sweeper", env):
            await wait_groups(redis, "sweeper-written", "sweeper-graph")
        async with serve("recall", env) as url:
            async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as c:
                r = await c.post("/v1/recall", json={"query": "Which city did Alice move to?"})
                body = r.json()
                assert body["situational_context"][0]["memory_id"] == mid
        async with serve("ingest", env) as url:
            async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as c:
                rec = (await c.get(f"/v1/memories/{mid}")).json()
        assert rec["graph"]["extracted"] is True
        assert rec["surprisal"]["judged_at"]
    finally:
        await redis.aclose()


async def test_the_inspector_serves_its_page_alone(tmp_path: Path) -> None:
    """`pcm serve inspector` (its Deployment's command) is the page and nothing else: it
    needs Redis only (readiness), and its routes are ingest's."""
    redis_url = f"{TEST_REDIS}/12"
    env = {
        **os.environ,
        **service_env(tmp_path, redis_url),
        # Nothing else to reach: a store it tried would fail the test.
        "NEO4J_URI": "bolt://127.0.0.1:1",
        "QDRANT_URL": "http://127.0.0.1:1",
    }
    async with serve("inspector", env) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as web:
            ready = await web.get("/readyz")
            assert ready.status_code == 200 and set(ready.json()["checks"]) == {"redis"}
            page = await web.get("/ui/memories/any-id")
            assert page.status_code == 200 and "PCM inspector" in page.text
            assert (await web.get("/ui/static/vendor/cytoscape.min.js")).status_code == 200
            auth = {"Authorization": "Bearer key-a"}
            for path in ("/v1/memories:search?q=x", "/v1/attention", "/v1/memories"):
                assert (await web.get(path, headers=auth)).status_code == 404, path
    async with serve("ingest", env | {"QDRANT_URL": ""}) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as api:
            got = await api.get("/v1/dead-letters", headers={"Authorization": "Bearer key-a"})
            assert got.status_code == 200, got.text
            assert (await api.get("/ui/")).status_code == 404
