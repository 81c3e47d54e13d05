"""Stored API keys against the real server and Redis: the admin API (roles, one tenant's
keys only, nothing secret stored or listed), `pcm keys`, and the rate limiter's script."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
from redis.asyncio import Redis
from typer.testing import CliRunner, Result

from pcm_cli.main import app
from pcm_common.access.ratelimit import RateLimiter
from tests.conftest import KEYS, RUN, TEST_REDIS, TEST_REDIS_URL

TENANT_A = KEYS["key-a"]


def client(url: str, key: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"})


async def until_status(url: str, key: str, path: str, want: int, within_s: float = 1.0) -> float:
    """Seconds until `path` with `key` answers `want` (fails after `within_s`)."""
    started = time.monotonic()
    async with client(url, key) as c:
        while True:
            status = (await c.get(path)).status_code
            elapsed = time.monotonic() - started
            if status == want:
                return elapsed
            assert elapsed < within_s, f"{path} still {status} after {elapsed:.2f} s"
            await asyncio.sleep(0.05)


async def nothing_secret_in(redis_url: str, *secrets: str) -> None:
    redis = Redis.from_url(redis_url)
    try:
        async for name in redis.scan_iter("pcm:apikey*"):
            kind = await redis.type(name)
            if kind == b"hash":
                values = list((await redis.hgetall(name)).values())
            elif kind == b"string":
                values = [await redis.get(name)]
            else:
                values = []
            blob = name + b" " + b" ".join(v for v in values if v is not None)
            assert not any(s.encode() in blob for s in secrets), name
    finally:
        await redis.aclose()


async def test_admin_api_roles_and_tenants(pcm_url: str) -> None:
    async with client(pcm_url, "key-a") as admin_a, client(pcm_url, "key-b") as admin_b:
        r = await admin_a.post("/v1/admin/keys", json={"role": "data"})
        assert r.status_code == 201, r.text
        made = r.json()
        data_key, key_id = made["key"], made["id"]
        assert made["tenant"] == TENANT_A and made["role"] == "data" and made["state"] == "active"

        async with client(pcm_url, data_key) as data:
            assert (await data.get("/v1/memories")).status_code == 200
            assert (await data.get("/v1/jobs")).status_code == 200
            r = await data.post("/v1/jobs/consolidation")  # the agents' hooks ask for it
            assert r.status_code == 200, r.text
            for method, path in (
                ("POST", "/v1/jobs/demotion"),
                ("GET", "/v1/admin/keys"),
                ("POST", "/v1/admin/keys"),
                ("DELETE", f"/v1/admin/keys/{key_id}"),
            ):
                r = await data.request(method, path, json={} if method == "POST" else None)
                assert r.status_code == 403, (path, r.text)
                assert r.json() == {"error": "forbidden", "detail": "this needs an admin key"}

        listed = (await admin_a.get("/v1/admin/keys")).json()["keys"]
        mine = next(k for k in listed if k["id"] == key_id)
        assert "key" not in mine and "digest" not in mine and data_key not in json.dumps(listed)
        assert data_key.startswith(mine["shown"])

        # Another tenant's admin neither sees nor touches the key.
        assert key_id not in json.dumps((await admin_b.get("/v1/admin/keys")).json())
        assert (await admin_b.delete(f"/v1/admin/keys/{key_id}")).status_code == 404
        assert (await admin_b.post(f"/v1/admin/keys/{key_id}:rotate")).status_code == 404

        # Rotation: both keys work during the overlap; the old one ends with it.
        r = await admin_a.post(f"/v1/admin/keys/{key_id}:rotate", json={"overlap_s": 3600})
        assert r.status_code == 201, r.text
        rotated = r.json()
        assert rotated["role"] == "data" and rotated["previous"]["rotated_to"] == rotated["id"]
        assert rotated["previous"]["expires_at"]
        await until_status(pcm_url, rotated["key"], "/v1/memories", 200)
        await until_status(pcm_url, data_key, "/v1/memories", 200)

        assert (await admin_a.delete(f"/v1/admin/keys/{rotated['id']}")).status_code == 204
        await until_status(pcm_url, rotated["key"], "/v1/memories", 401)
        r = await admin_a.post(f"/v1/admin/keys/{rotated['id']}:rotate")
        assert r.status_code == 409 and r.json()["error"] == "key_not_active"
        await nothing_secret_in(TEST_REDIS_URL, data_key, rotated["key"])


async def keys_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner()
    env = {"REDIS_URL": TEST_REDIS_URL, **(env or {})}
    # The server runs in this event loop; the command runs its own in a thread.
    result = await asyncio.to_thread(runner.invoke, app, ["keys", *args], env=env)
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result


async def test_cli_create_list_rotate_revoke(pcm_url: str) -> None:
    tenant = f"cli-keys-{RUN}"
    made = json.loads((await keys_cli("create", "--tenant", tenant, "--json")).stdout)
    assert made["role"] == "data" and made["tenant"] == tenant
    await until_status(pcm_url, made["key"], "/v1/memories", 200)

    admin = await keys_cli("create", "--tenant", tenant, "--role", "admin", "--expires-in", "1h")
    admin_key = admin.stdout.split("key: ", 1)[1].split()[0]
    assert "shown only now" in admin.stderr

    table = (await keys_cli("list", "--tenant", tenant)).stdout
    assert made["id"] in table and made["key"] not in table and admin_key not in table
    rows = json.loads((await keys_cli("list", "--tenant", tenant, "--json")).stdout)
    assert {(k["role"], k["state"]) for k in rows} == {("data", "active"), ("admin", "active")}
    assert next(k for k in rows if k["role"] == "admin")["expires_at"]

    # The admin key just made administers its tenant through the API too (`--api`).
    via_api = {"PCM_URL": pcm_url, "PCM_API_KEY": admin_key, "REDIS_URL": "redis://nowhere:1"}
    listed = json.loads((await keys_cli("list", "--api", "--json", env=via_api)).stdout)
    assert [(k["id"], k["role"], k["state"]) for k in listed] == [
        (k["id"], k["role"], k["state"]) for k in rows
    ]
    extra = json.loads((await keys_cli("create", "--api", "--json", env=via_api)).stdout)
    assert extra["tenant"] == tenant and extra["role"] == "data"
    await until_status(pcm_url, extra["key"], "/v1/memories", 200)
    await keys_cli("revoke", "--api", extra["id"], env=via_api)
    await until_status(pcm_url, extra["key"], "/v1/memories", 401)

    rotated = json.loads((await keys_cli("rotate", made["id"], "--overlap", "0", "--json")).stdout)
    await until_status(pcm_url, rotated["key"], "/v1/memories", 200)
    await until_status(pcm_url, made["key"], "/v1/memories", 401)

    assert f"revoked {rotated['id']}" in (await keys_cli("revoke", rotated["id"])).stdout
    await until_status(pcm_url, rotated["key"], "/v1/memories", 401)
    states = {
        k["id"]: k["state"]
        for k in json.loads((await keys_cli("list", "--tenant", tenant, "--json")).stdout)
    }
    assert states[made["id"]] == "expired" and states[rotated["id"]] == "revoked"
    await nothing_secret_in(TEST_REDIS_URL, made["key"], admin_key, rotated["key"])


async def test_rate_limit_and_tenant_quota_script() -> None:
    redis = Redis.from_url(f"{TEST_REDIS}/10")
    try:
        limiter = RateLimiter(redis, per_s=2, burst=3, tenant_per_min=0)
        key = f"k-{RUN}"
        assert [await limiter.check(key, "t") for _ in range(3)] == [None, None, None]
        wait = await limiter.check(key, "t")
        assert wait is not None and 0 < wait <= 0.5
        await asyncio.sleep(wait)
        assert await limiter.check(key, "t") is None

        quota = RateLimiter(redis, per_s=0, burst=0, tenant_per_min=4)
        tenant = f"quota-{RUN}"
        # The quota counts every key of the tenant.
        assert [await quota.check(f"key{i}", tenant) for i in range(4)] == [None] * 4
        wait = await quota.check("another", tenant)
        assert wait is not None and 59 < wait <= 60
        assert await quota.check("another", f"other-{RUN}") is None

        assert not RateLimiter(redis, 0, 0, 0).enabled  # off: no Redis call at all
    finally:
        await redis.aclose()
