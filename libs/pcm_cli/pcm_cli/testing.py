"""Run a real all-in-one PCM server, for tests and benchmarks that need the true HTTP path
(real Redis, Qdrant Edge on disk, the graph server): inside the current event loop
(`running_server`), or in a child process of its own as `make run` starts it
(`server_process`), so that a client's work does not share the server's interpreter lock."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from pcm_client import AsyncPcmClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


async def _flush(url: str) -> None:
    from pcm_common.stores.redis.connect import open_redis

    redis = open_redis(url)  # a cluster's FLUSHDB goes to every primary
    await redis.flushdb()
    await redis.aclose()


@asynccontextmanager
async def running_server(
    env: Mapping[str, str], *, flush_redis: bool = True, start_timeout_s: float = 120.0
) -> AsyncIterator[str]:
    """Set `env` for this process, start the dev app on a free port, yield its base URL.

    Settings are read from the environment when the app is built, so `env` decides Redis,
    the Qdrant path, the graph URI, API keys and any tuning knob.
    """
    import uvicorn

    os.environ.update(env)
    if flush_redis:
        await _flush(os.environ.get("REDIS_URL", DEFAULT_REDIS_URL))
    from pcm_cli.app import dev_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            dev_app(),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            log_config=None,
            access_log=False,
        )
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


@asynccontextmanager
async def server_process(
    env: Mapping[str, str],
    command: Sequence[str] = ("dev",),
    *,
    flush_redis: bool = True,
    start_timeout_s: float = 180.0,
    stop_timeout_s: float = 60.0,
    output: Path | None = None,
) -> AsyncIterator[str]:
    """`pcm <command> --port N` (`pcm dev` by default, or `pcm serve <service> --host
    127.0.0.1`, ...) in a child process with this process's environment plus `env`; yields
    its base URL once `/readyz` answers. On exit it is stopped with SIGTERM (uvicorn drains
    the broker) and killed if it has not stopped within `stop_timeout_s`. `output`: a file
    for its stdout and stderr (its logs), else they go to this process's as they come."""
    full = {**os.environ, **env}
    if flush_redis:
        await _flush(full.get("REDIS_URL", DEFAULT_REDIS_URL))
    port = free_port()
    with ExitStack() as files:
        sink = files.enter_context(output.open("ab")) if output else None
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "pcm_cli.main", *command, "--port", str(port)),
            env=full,
            stdout=sink,
            stderr=sink,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            await _wait_healthy(proc, url, start_timeout_s)
            yield url
        finally:
            await _stop(proc, stop_timeout_s)


class ServerProcess:
    """A `pcm` server in a child process that a fault test kills and starts again: the same
    command, environment and port each time (`server_process` when nothing is killed)."""

    def __init__(
        self,
        env: Mapping[str, str],
        command: Sequence[str] = ("dev",),
        *,
        output: Path | None = None,
        start_timeout_s: float = 180.0,
    ) -> None:
        self.env = {**os.environ, **env}
        self.command = tuple(command)
        self.output = output
        self.start_timeout_s = start_timeout_s
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> str:
        """Start it and wait for `/readyz`; returns its base URL."""
        sink = self.output.open("ab") if self.output else None
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", "pcm_cli.main", *self.command, "--port", str(self.port)),
                env=self.env,
                stdout=sink,
                stderr=sink,
            )
        finally:
            if sink is not None:
                sink.close()  # the child holds its own descriptor
        await _wait_healthy(self.proc, self.url, self.start_timeout_s)
        return self.url

    async def kill(self) -> None:
        """SIGKILL: no drain, no flush, as the kernel's OOM killer or a node loss does."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.proc = None

    async def stop(self, timeout_s: float = 60.0) -> None:
        """SIGTERM (the broker drains), SIGKILL after `timeout_s`."""
        if self.proc is not None:
            await _stop(self.proc, timeout_s)
        self.proc = None


async def _wait_healthy(proc: asyncio.subprocess.Process, url: str, timeout_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with httpx.AsyncClient(base_url=url, timeout=2.0) as c:
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"PCM server exited with {proc.returncode} (its output above)")
            try:
                if (await c.get("/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            if loop.time() > deadline:
                raise TimeoutError(f"PCM server did not start within {timeout_s:.0f} s")
            await asyncio.sleep(0.2)


async def _stop(proc: asyncio.subprocess.Process, timeout_s: float) -> None:
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()


async def settle(
    client: httpx.AsyncClient | AsyncPcmClient, within_s: float = 120.0
) -> dict[str, Any]:
    """Wait until every consumer group has processed everything written so far (asked
    through pcm-client, or a raw client of the tests that test the wire)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        if isinstance(client, AsyncPcmClient):
            status = await client.pipeline()
        else:
            status = (await client.get("/v1/pipeline")).json()
        if status["pending"] == 0:
            return status
        if loop.time() > deadline:
            raise TimeoutError(f"pipeline did not settle: {status}")
        await asyncio.sleep(0.1)
