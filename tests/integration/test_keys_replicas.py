"""Two `pcm serve` processes sharing one Redis: a key created or rotated through one works
on the other within a second, a revoked one is refused by both within a second, and the
per-key rate limit is counted across them. And `pcm serve` will not start with the dev key
outside a development machine."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from pcm_cli.testing import free_port, server_process
from tests.conftest import RUN, TEST_REDIS, service_env
from tests.integration.test_api_keys import client, until_status

pytestmark = pytest.mark.slow

ROOT = f"root-{RUN}"
KEYS = "/v1/admin/keys"  # graph-extractor has no data routes; the admin ones serve to check


async def test_keys_across_replicas(tmp_path: Path) -> None:
    redis_url = f"{TEST_REDIS}/10"
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    await redis.aclose()
    env = {
        **service_env(tmp_path, redis_url),
        "PCM_DEV_KEY_ENABLED": "false",
        "PCM_ENV": "",
        "PCM_API_KEYS": "{}",
        "PCM_ADMIN_KEYS": f'{{"{ROOT}": "tenant-{RUN}"}}',
        "PCM_RATE_LIMIT_PER_S": "1",
        "PCM_RATE_LIMIT_BURST": "3",
    }
    command = ("serve", "graph-extractor", "--host", "127.0.0.1")
    async with (
        server_process(env, command, flush_redis=False) as a,
        server_process(env, command, flush_redis=False) as b,
        client(a, ROOT) as root_a,
        client(b, ROOT) as root_b,
    ):
        r = await root_a.post(KEYS, json={"role": "admin"})
        assert r.status_code == 201, r.text
        k1 = r.json()
        seen = await until_status(b, k1["key"], KEYS, 200)

        # One bucket for the key, whichever replica answers: 3 at once, then 429.
        answers = []
        for i in range(6):
            async with client(a if i % 2 else b, k1["key"]) as c:
                answers.append(await c.get(KEYS))
        codes = [r.status_code for r in answers]
        assert codes.count(200) <= 3 and codes[-1] == 429, codes
        limited = answers[-1]
        assert limited.json()["error"] == "rate_limited"
        assert int(limited.headers["Retry-After"]) >= 1

        r = await root_b.post(f"{KEYS}/{k1['id']}:rotate", json={"overlap_s": 3600})
        assert r.status_code == 201, r.text
        k2 = r.json()
        rotated_seen = await until_status(a, k2["key"], KEYS, 200)
        async with client(a, k1["key"]) as c:
            assert (await c.get(KEYS)).status_code in (200, 429)  # still valid: the overlap

        await until_status(b, k2["key"], KEYS, 200)  # both replicas now have it cached
        assert (await root_a.delete(f"{KEYS}/{k2['id']}")).status_code == 204
        refused = await asyncio.gather(
            until_status(a, k2["key"], KEYS, 401), until_status(b, k2["key"], KEYS, 401)
        )
    print(f"new key seen {seen:.2f} s, rotated {rotated_seen:.2f} s, revoked {refused} s")


def test_serve_refuses_the_dev_key() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PCM_ENV", "PCM_DEV_KEY_ENABLED")}
    port = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", "pcm_cli.main", "serve", "ingest", "--port", port],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to start with the public dev key" in lines[0]
    assert "PCM_DEV_KEY_ENABLED=false" in lines[0] and "PCM_ENV=dev" in lines[0]
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
