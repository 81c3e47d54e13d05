"""Request ids and logs on a real `pcm dev` child process (real Redis, Qdrant Edge, the
graph server): the id comes back on every answer, errors included; every line the process
writes is JSON, libraries' too; one write's lines, the consumers' included, carry its id."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from pcm_cli.testing import server_process, settle
from tests.conftest import TEST_REDIS, service_env

pytestmark = pytest.mark.slow

AUTH = {"Authorization": "Bearer key-a"}


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for raw in path.read_text().splitlines():
        # `pcm dev` prints its URL on stdout, which the test's file also takes; logs are
        # on stderr.
        if raw.strip() and not raw.startswith("PCM dev: "):
            out.append(json.loads(raw))  # a plain-text line fails the test here
    return out


async def _garbage(url: str) -> None:
    """Bytes that are no HTTP request: uvicorn logs a warning of its own about them."""
    u = urlparse(url)
    reader, writer = await asyncio.open_connection(u.hostname, u.port)
    writer.write(b"\x16\x03\x01 not http at all\r\n\r\n")
    await writer.drain()
    await reader.read()
    writer.close()


async def test_request_ids_and_json_logs(tmp_path: Path) -> None:
    log_file = tmp_path / "pcm.log"
    env = {**service_env(tmp_path, f"{TEST_REDIS}/14"), "PCM_LOG_LEVEL": "INFO"}
    rid = "write-7f3a.trace:01"
    async with server_process(env, output=log_file) as url:
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=60) as c:
            r = await c.post(
                "/v1/memories",
                json={"text": "Marta moved to Porto to work for Siemens."},
                headers={"X-Request-ID": rid},
            )
            assert r.status_code == 201, r.text
            assert r.headers["x-request-id"] == rid
            # Made here when absent, or when what was sent is too long or not printable.
            made = (await c.get("/v1/stats")).headers["x-request-id"]
            too_long = await c.get("/v1/stats", headers={"X-Request-ID": "x" * 200})
            spaced = await c.get("/v1/stats", headers={"X-Request-ID": "a b"})
            for answer in (made, too_long.headers["x-request-id"], spaced.headers["x-request-id"]):
                assert len(answer) == 32 and int(answer, 16) >= 0
            assert (
                len({made, too_long.headers["x-request-id"], spaced.headers["x-request-id"]}) == 3
            )
            # Errors carry it too: a refused key, a validation error, a body over the limit
            # (refused before any route runs), an unknown path.
            errors = [
                await c.get(
                    "/v1/stats", headers={"Authorization": "Bearer nope", "X-Request-ID": "e1"}
                ),
                await c.post("/v1/memories", json={"text": ""}, headers={"X-Request-ID": "e2"}),
                await c.post(
                    "/v1/memories",
                    content=b"x" * (9 * 1024 * 1024),
                    headers={"X-Request-ID": "e3"},
                ),
                await c.get("/nowhere", headers={"X-Request-ID": "e4"}),
            ]
            assert [e.status_code for e in errors] == [401, 422, 413, 404]
            assert [e.headers["x-request-id"] for e in errors] == ["e1", "e2", "e3", "e4"]
            # A query string never reaches the logs.
            q = await c.get("/v1/memories", params={"token": "sekrit-in-query"})
            assert q.status_code == 200
            assert (await c.get("/healthz")).headers["x-request-id"]
            await settle(c)
        await _garbage(url)
        await asyncio.sleep(0.5)
    text = log_file.read_text()
    lines = _lines(log_file)
    assert "sekrit-in-query" not in text
    # Libraries' records come through the same JSON renderer, named by their logger.
    assert any(ln.get("logger", "").startswith("uvicorn") for ln in lines), text[-2000:]
    mine = [ln for ln in lines if ln.get("request_id") == rid]
    events = {ln["event"] for ln in mine}
    access = [ln for ln in mine if ln["event"] == "http_request"]
    assert len(access) == 1
    assert access[0]["method"] == "POST" and access[0]["path"] == "/v1/memories"
    assert access[0]["status"] == 201 and access[0]["duration_ms"] > 0
    assert access[0]["level"] == "info" and access[0]["tenant"].startswith("tenant-a-")
    # The graph-extractor's and the sweeper's lines of this write carry the write's id.
    assert {"facts_written", "memory_extracted"} <= events, events
    failed = [ln for ln in lines if ln.get("request_id") == "e1"]
    assert [ln["status"] for ln in failed if ln["event"] == "http_request"] == [401]
    # Probes stay out of the INFO access lines.
    assert not [ln for ln in lines if ln.get("path") == "/healthz"]
