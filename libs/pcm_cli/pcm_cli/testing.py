"""Run a real all-in-one PCM server inside the current event loop: for tests and benchmarks
that need the true HTTP path (real Redis, Qdrant Edge on disk, the graph server)."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def running_server(
    env: Mapping[str, str], *, flush_redis: bool = True, start_timeout_s: float = 120.0
) -> AsyncIterator[str]:
    """Set `env` for this process, start the dev app on a free port, yield its base URL.

    Settings are read from the environment when the app is built, so `env` decides Redis,
    the Qdrant path, the graph URI, API keys and any tuning knob.
    """
    import uvicorn
    from redis.asyncio import Redis

    os.environ.update(env)
    if flush_redis:
        redis = Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
        await redis.flushdb()
        await redis.aclose()
    from pcm_cli.app import dev_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(dev_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    deadline = asyncio.get_running_loop().time() + start_timeout_s
    while not server.started:
        if task.done():
            task.result()
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("PCM server did not start")
        await asyncio.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def settle(client: httpx.AsyncClient, within_s: float = 120.0) -> dict[str, Any]:
    """Wait until every consumer group has processed everything written so far."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        status: dict[str, Any] = (await client.get("/v1/pipeline")).json()
        if status["pending"] == 0:
            return status
        if loop.time() > deadline:
            raise TimeoutError(f"pipeline did not settle: {status}")
        await asyncio.sleep(0.1)
