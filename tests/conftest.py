"""Shared fixtures: a real all-in-one PCM server (real Redis, Qdrant Edge on disk, the graph
server at NEO4J_URI) started once per session on a free port."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import free_port, running_server, settle
from pcm_client import NO_RETRY, AsyncPcmClient

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

RUN = uuid.uuid4().hex[:8]
# Tests own databases 13-15 of this Redis; point PCM_TEST_REDIS at another server to run
# several test sessions side by side.
TEST_REDIS = os.environ.get("PCM_TEST_REDIS", "redis://127.0.0.1:6379").rstrip("/")
TEST_REDIS_URL = f"{TEST_REDIS}/15"
NEO4J_URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
KEYS = {"key-a": f"tenant-a-{RUN}", "key-b": f"tenant-b-{RUN}"}


def service_env(tmp: Path, redis_url: str = TEST_REDIS_URL) -> dict[str, str]:
    return {
        "REDIS_URL": redis_url,
        "NEO4J_URI": NEO4J_URI,
        "PCM_QDRANT_PATH": str(tmp / "qdrant"),
        "PCM_API_KEYS": json.dumps(KEYS),
        # `pcm serve` refuses the dev key (on by default) outside a development machine.
        "PCM_ENV": "dev",
        "PCM_CLAIM_IDLE_MS": "2000",
        "PCM_JOB_INTERVAL_S": "3600",
        "PCM_LOG_LEVEL": "WARNING",
    }


@pytest.fixture(scope="session")
async def pcm_url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    async with running_server(service_env(tmp_path_factory.mktemp("pcm"))) as url:
        yield url


def _client(url: str, key: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


@pytest.fixture
async def client_a(pcm_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(pcm_url, "key-a") as c:
        yield c


@pytest.fixture
async def client_b(pcm_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(pcm_url, "key-b") as c:
        yield c


# The same two tenants through pcm-client, for tests of what the server does rather than of
# its wire (docs/client.md, "Where raw HTTP stays"). No retries: a test sees every failure
# the raw client would have seen.
def _pcm(url: str, key: str) -> AsyncPcmClient:
    return AsyncPcmClient(url, key, timeout=60, retry=NO_RETRY)


@pytest.fixture
async def pcm_a(pcm_url: str) -> AsyncIterator[AsyncPcmClient]:
    async with _pcm(pcm_url, "key-a") as c:
        yield c


@pytest.fixture
async def pcm_b(pcm_url: str) -> AsyncIterator[AsyncPcmClient]:
    async with _pcm(pcm_url, "key-b") as c:
        yield c


__all__ = ["free_port", "settle"]
