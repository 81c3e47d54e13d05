"""Shared fixtures: a real all-in-one PCM server (real Redis, Qdrant Edge on disk, the graph
server at NEO4J_URI) started once per session on a free port."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

RUN = uuid.uuid4().hex[:8]
TEST_REDIS_URL = os.environ.get("PCM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
NEO4J_URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
KEYS = {"key-a": f"tenant-a-{RUN}", "key-b": f"tenant-b-{RUN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service_env(tmp: Path, redis_url: str = TEST_REDIS_URL) -> dict[str, str]:
    return {
        "REDIS_URL": redis_url,
        "NEO4J_URI": NEO4J_URI,
        "PCM_QDRANT_PATH": str(tmp / "qdrant"),
        "PCM_API_KEYS": json.dumps(KEYS),
        "PCM_CLAIM_IDLE_MS": "2000",
        "PCM_JOB_INTERVAL_S": "3600",
        "PCM_LOG_LEVEL": "WARNING",
    }


@pytest.fixture(scope="session")
async def pcm_url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    import uvicorn
    from redis.asyncio import Redis

    redis = Redis.from_url(TEST_REDIS_URL)
    await redis.flushdb()
    await redis.aclose()
    os.environ.update(service_env(tmp_path_factory.mktemp("pcm")))
    from pcm_cli.app import dev_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(dev_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(600):
        if server.started:
            break
        if task.done():
            task.result()
        await asyncio.sleep(0.1)
    assert server.started, "PCM server did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


def _client(url: str, key: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


@pytest.fixture
async def client_a(pcm_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(pcm_url, "key-a") as c:
        yield c


@pytest.fixture
async def client_b(pcm_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(pcm_url, "key-b") as c:
        yield c


async def settle(client: httpx.AsyncClient, within_s: float = 60.0) -> dict:
    """Wait until every consumer group has processed everything written so far."""
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        status = (await client.get("/v1/pipeline")).json()
        if status["pending"] == 0:
            return status
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"pipeline did not settle: {status}")
        await asyncio.sleep(0.1)
