"""A private redis-server for tests that stop and restart it (never the shared one): a free
port, its append-only file fsynced on every write under a temporary folder, as
`scripts/redis.sh` runs the project's."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from redis.asyncio import Redis

from pcm_cli.testing import free_port


class PrivateRedis:
    def __init__(self, folder: Path, args: Sequence[str] = ()) -> None:
        self.folder = folder
        self.args = tuple(args)  # more options, after (and over) the defaults
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = await asyncio.create_subprocess_exec(
            "redis-server",
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            *self.args,
            stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        # (Loading a large append-only file takes a while after a restart.)
        client = Redis.from_url(self.url)
        try:
            for _ in range(400):
                try:
                    if await client.ping():
                        return
                except Exception:
                    await asyncio.sleep(0.05)
            raise RuntimeError("private redis-server did not start")
        finally:
            await client.aclose()

    async def stop(self) -> None:
        """SHUTDOWN as an operator's restart does (the append-only file is complete)."""
        if self.proc is None:
            return
        self.proc.terminate()
        await asyncio.wait_for(self.proc.wait(), 10)
        self.proc = None

    async def restart(self, down_s: float = 0.0) -> None:
        await self.stop()
        await asyncio.sleep(down_s)
        await self.start()


@asynccontextmanager
async def private_redis(folder: Path) -> AsyncIterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(folder)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
