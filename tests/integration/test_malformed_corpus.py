"""Issue 33 F: a corpus of malformed requests against every endpoint in the OpenAPI schema,
sent on one keep-alive connection: no 5xx, and no connection dropped (a response may close
the connection only by saying `Connection: close`)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

from tests.http_wire import Connection, connection, request

AUTH = {"Authorization": "Bearer key-a"}
JSON = {**AUTH, "Content-Type": "application/json"}

BAD_BODIES: list[bytes] = [
    b"",
    b"{",
    b"not json",
    b"null",
    b"[]",
    b"123",
    b'"text"',
    b"{}",
    b'{"text": 1}',
    b'{"text": null}',
    b'{"text": ["a"]}',
    b'{"text": "ok", "unknown": 1}',
    b'{"text": "a\\u0000b"}',
    b'{"text": "\\ud800"}',  # a lone surrogate
    b'{"text": "ok", "metadata": {"n": 1e999}}',
    b'{"text": "a fresh text with a huge integer", "metadata": {"n": 184467440737095516160}}',
    b'{"text": "ok", "metadata": {"n": ' + b"9" * 5000 + b"}}",
    b'{"text": "ok", "metadata": ' + b'{"a": ' * 40 + b"1" + b"}" * 40 + b"}",
    b'{"a": ' * 5000 + b"1" + b"}" * 5000,
    b"[" * 100_000,
    b'{"text": "ok", "created_at": "0000-00-00"}',
    b'{"text": "ok", "created_at": "9999-12-31T23:59:59Z"}',
    b'{"text": "ok", "created_at": 1e300}',
    b'{"text": "ok", "scope": "project"}',
    b'{"text": "ok", "importance": "urgent"}',
    b'{"text": "ok", "pinned": "maybe"}',
    b'{"text": "ok", "user_id": ""}',
    b'{"text": "ok", "user_id": "' + b"u" * 5000 + b'"}',
    b'{"memories": []}',
    b'{"memories": {"text": "x"}}',
    b'{"memories": [null]}',
    b'{"query": "q", "k": -1}',
    b'{"query": "q", "k": 1e400}',
    b'{"query": "q", "now": "0001-01-01T00:00:00Z", "k": 99999999999999999999999}',
    b'{"now": "9999-12-31T00:00:00Z"}',
    b'{"now": "0001-01-01T00:00:00Z"}',
    b'{"now": "yesterday"}',
    b'{"scope": "galaxy"}',
    b'{"retention_days": -5}',
    b"\xff\xfe\x00\x00",
    b"\xef\xbb\xbf{}",  # a byte-order mark before the JSON
    b'{"text": "dup", "text": "licate"}',
]
CONTENT_TYPES = [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "application/json; charset=utf-16",
    "application/xml",
]
BAD_HEADERS: list[dict[str, str]] = [
    {},
    {"Authorization": "Bearer"},
    {"Authorization": "Basic a2V5LWE6"},
    {"Authorization": "Bearer wrong-key"},
    {"Authorization": "Bearer " + "k" * 10_000},
    {"Authorization": "bearer key-a", "Idempotency-Key": "k" * 300},
    {**AUTH, "Idempotency-Key": "é"},
    {**AUTH, "Accept": "application/xml"},
    {**AUTH, "Content-Length": "abc"},
]
BAD_QUERIES = [
    "limit=-1",
    "limit=abc",
    "limit=1e309",
    "limit=99999999999999999999999",
    "offset=not-an-offset",
    "scope=galaxy",
    "pinned=maybe",
    "state=%ff",
    "user_id=a%00b",
    "user_id=" + "u" * 10_000,
    "limit=1&limit=2&limit=x",
    "%zz=1",
]
BAD_IDS = ["not-a-uuid", "%00", "x" * 5000, "..%2F..%2Fetc", "%zz", str(uuid.uuid4())]


def _fill(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", value, path)


def corpus(schema: dict[str, Any]) -> Iterator[tuple[str, str, bytes | None, dict[str, str]]]:
    """(method, path, body, headers) for every operation of the schema."""
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            m = method.upper()
            concrete = _fill(path, str(uuid.uuid4()))
            for bad_id in BAD_IDS if "{" in path else []:
                yield m, _fill(path, bad_id), b"{}" if "requestBody" in op else None, JSON
            for headers in BAD_HEADERS:
                yield m, concrete, b"{}" if "requestBody" in op else None, headers
            for query in BAD_QUERIES if m in ("GET", "DELETE") else []:
                yield m, f"{concrete}?{query}", None, AUTH
            if "requestBody" not in op:
                continue
            for body in BAD_BODIES:
                yield m, concrete, body, JSON
            for kind in CONTENT_TYPES:
                yield m, concrete, b'{"text": "ok", "query": "q"}', {**AUTH, "Content-Type": kind}
            yield m, concrete, b"x" * (9 * 1024 * 1024), JSON  # past the 8 MiB limit
    for job in ("demotion", "consolidation", "repair", "graph_repair", "governance"):
        for body in (b'{"now": "0001-01-01T00:00:00Z"}', b'{"now": "9999-12-31T00:00:00Z"}'):
            yield "POST", f"/v1/jobs/{job}", body, JSON
    for m, path in (("DELETE", "/v1/recall"), ("PUT", "/v1/memories"), ("GET", "/v1/nowhere")):
        yield m, path, None, AUTH
    yield "GET", "//v1//memories", None, AUTH
    yield "POST", "/v1/jobs/" + "j" * 3000, b"{}", JSON


async def _send(conn: Connection, raw: bytes) -> tuple[int, bool]:
    reply = await conn.send(raw)
    return reply.status, reply.headers.get("connection", "").lower() == "close"


async def test_malformed_requests_get_no_5xx_and_keep_the_connection(pcm_url: str) -> None:
    async with connection(pcm_url) as conn:
        schema = json.loads((await conn.send(request("GET", "/openapi.json"))).body)
    cases = list(corpus(schema))
    assert len(cases) >= 150, len(cases)
    failures: list[str] = []
    closed = 0
    statuses: dict[int, int] = {}
    i = 0
    while i < len(cases):
        async with connection(pcm_url) as conn:
            while i < len(cases):
                method, path, body, headers = cases[i]
                i += 1
                what = f"{method} {path[:80]} {(body or b'')[:60]!r} {list(headers)}"
                try:
                    status, closing = await _send(conn, request(method, path, body, headers))
                except Exception as exc:  # dropped without a word, or no answer
                    failures.append(f"dropped ({exc!r}): {what}")
                    break
                statuses[status] = statuses.get(status, 0) + 1
                if status >= 500:
                    failures.append(f"{status}: {what}")
                if closing:
                    closed += 1
                    break
    print(f"{len(cases)} malformed requests: statuses {sorted(statuses.items())}, closed {closed}")
    assert not failures, "\n".join(failures[:20])
