"""Errors every service answers alike (`pcm_common.http.install`): Redis unreachable is a
JSON 503 with Retry-After, not a bare 500 or a dropped connection."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pcm_common.http import install


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
