"""Raw HTTP/1.1 on one keep-alive connection, for tests that must see a dropped connection
(an HTTP client library would quietly open another)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI

from pcm_cli.testing import free_port


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str = "t",
) -> bytes:
    """One request's bytes; `Content-Length` from the body unless `headers` sets it."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    given = {k.lower() for k in (headers or {})}
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None and "content-length" not in given:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


async def read_reply(reader: asyncio.StreamReader) -> Reply:
    """One response; raises `asyncio.IncompleteReadError` when the server closed."""
    head = await reader.readuntil(b"\r\n\r\n")
    first, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    if "content-length" in headers:
        return Reply(
            int(first.split()[1]), headers, await reader.readexactly(int(headers["content-length"]))
        )
    body = b""
    if headers.get("transfer-encoding") == "chunked":
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
    return Reply(int(first.split()[1]), headers, body)


class Connection:
    """One TCP connection; `send` answers each request in turn."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, raw: bytes, timeout_s: float = 60.0) -> Reply:
        self.writer.write(raw)
        await self.writer.drain()
        return await asyncio.wait_for(read_reply(self.reader), timeout_s)


@asynccontextmanager
async def connection(url: str) -> AsyncIterator[Connection]:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        yield Connection(reader, writer)
    finally:
        writer.close()


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[str]:
    """`app` under uvicorn (the server PCM runs on) on a free port, in this event loop."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
