"""Errors every service answers alike (`pcm_common.runtime.http.install`): Redis unreachable is a
JSON 503 with Retry-After, and so is a store's I/O error; any other error a JSON 500, never a
dropped connection."""

from __future__ import annotations

import httpx
from fastapi import BackgroundTasks, FastAPI
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pcm_common.runtime.http import install
from tests.http_wire import connection, request, serving


def app_raising(exc: Exception) -> FastAPI:
    app = FastAPI()
    install(app, "test")

    @app.post("/v1/thing")
    async def thing() -> dict[str, str]:
        raise exc

    return app


async def test_redis_down_is_a_json_503() -> None:
    for exc in (RedisConnectionError("Error 111 connecting"), RedisTimeoutError("timed out")):
        transport = httpx.ASGITransport(app=app_raising(exc))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            r = await client.post("/v1/thing", json={})
        assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
        assert r.headers["retry-after"] == "5"


async def test_a_store_io_error_is_a_json_503() -> None:
    # The vector store's disk failing, a connection refused, a timeout: the fault suite's
    # vector store case answered 500 before (tests/faults/test_store_faults.py).
    for exc in (OSError(5, "Input/output error"), ConnectionRefusedError(111, "refused")):
        transport = httpx.ASGITransport(app=app_raising(exc))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            r = await client.post("/v1/thing", json={})
        assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
        assert r.headers["retry-after"] == "5"


async def test_a_body_nested_past_the_decoder_is_malformed_json() -> None:
    app = FastAPI()
    install(app, "test")

    @app.post("/v1/echo")
    async def echo(body: dict[str, object]) -> dict[str, object]:
        return body

    deep = b'{"a": ' * 3000 + b"1" + b"}" * 3000
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        r = await client.post(
            "/v1/echo", content=deep, headers={"content-type": "application/json"}
        )
    assert r.status_code == 400 and r.json()["error"] == "malformed_json", r.text


async def test_an_unexpected_error_is_a_json_500_on_a_connection_that_stays_open() -> None:
    app = app_raising(RuntimeError("boom"))

    @app.get("/v1/later")
    async def later(background: BackgroundTasks) -> dict[str, str]:
        async def fail() -> None:
            raise RuntimeError("after the response")

        background.add_task(fail)  # as a recall's publish on a dead connection
        return {"ok": "yes"}

    async with serving(app) as url, connection(url) as conn:
        r = await conn.send(request("POST", "/v1/thing", b"{}"))
        assert r.status == 500 and r.json()["error"] == "internal_error"
        assert r.headers.get("connection") != "close"
        r = await conn.send(request("GET", "/v1/later"))
        assert r.status == 200 and r.json() == {"ok": "yes"}
        for _ in range(2):  # the same connection still answers after both
            assert (await conn.send(request("GET", "/v1/nothing"))).status == 404


async def test_nul_in_a_path_or_query_is_refused() -> None:
    transport = httpx.ASGITransport(app=app_raising(RuntimeError("unreached")))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for url in ("/v1/thing?user_id=a%00b", "/v1/th%00ing"):
            r = await client.post(url, json={})
            assert r.status_code == 422 and r.json()["error"] == "invalid_request", url
