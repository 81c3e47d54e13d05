"""/healthz on a real all-in-one server: 200 while every loop beats (idle waits included),
503 naming the loop once the graph-extractor's reader or the scheduler is stuck in a handler
or a job past `PCM_STALL_AFTER_S`, 200 again once they move on."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import running_server
from pcm_common.messaging.events import MemoryWritten
from pcm_common.messaging.stream_batches import Outcome
from pcm_graph_extractor.handlers import GraphHandlers
from pcm_sweeper.jobs import Jobs
from tests.conftest import TEST_REDIS, service_env

MARK = "stall-this-batch"
BOUND_S = 1.5


@pytest.fixture
def restored_env() -> Iterator[None]:
    # running_server sets the environment for the process: later servers must not inherit
    # this test's short bound and fast scheduler.
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


async def _health(c: httpx.AsyncClient) -> httpx.Response:
    return await c.get("/healthz")


async def _until(c: httpx.AsyncClient, status: int, within_s: float = 30.0) -> httpx.Response:
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        r = await _health(c)
        if r.status_code == status or asyncio.get_running_loop().time() > deadline:
            return r
        await asyncio.sleep(0.2)


async def test_healthz_names_a_stalled_consumer_and_scheduler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restored_env: None
) -> None:
    release = asyncio.Event()
    extract = GraphHandlers.process_batch
    demote = Jobs.demote

    # The real handler and job, held up for this test's marked memory and tenant: the loop
    # that runs them is really stuck, as on a hung socket.
    async def held_batch(self: GraphHandlers, events: list[MemoryWritten]) -> list[Outcome]:
        if any(MARK in ev.text for ev in events):
            await release.wait()
        return await extract(self, events)

    async def held_demote(self: Jobs, tenant: str, now: datetime) -> int:
        await release.wait()
        return await demote(self, tenant, now)

    monkeypatch.setattr(GraphHandlers, "process_batch", held_batch)
    monkeypatch.setattr(Jobs, "demote", held_demote)
    env = {
        **service_env(tmp_path, f"{TEST_REDIS}/13"),
        "PCM_STALL_AFTER_S": str(BOUND_S),
        "PCM_JOB_INTERVAL_S": "0.3",
    }
    try:
        async with running_server(env) as url:
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": "Bearer key-a"}, timeout=60
            ) as c:
                # Idle past the bound (no tenant yet, so no job runs): every loop beats.
                await asyncio.sleep(BOUND_S * 2)
                r = await _health(c)
                assert r.status_code == 200 and r.json() == {"status": "ok"}
                w = await c.post("/v1/memories", json={"text": f"Ana wrote {MARK} today."})
                assert w.status_code == 201, w.text
                r = await _until(c, 503)
                assert r.status_code == 503, r.text
                body = r.json()
                assert body["status"] == "stalled" and body["stall_after_s"] == BOUND_S
                for _ in range(150):  # the second one may cross the bound a little later
                    r = await _health(c)
                    assert r.status_code == 503
                    stalled = r.json()["stalled"]
                    # Whichever of the graph-extractor's readers got the marked entry.
                    held = [n for n in stalled if n.startswith("read:graph-extractor:")]
                    if held and "scheduler" in stalled:
                        break
                    await asyncio.sleep(0.2)
                # Silent longer than the bound (reported to a tenth of a second).
                assert len(held) == 1 and stalled[held[0]] >= BOUND_S
                assert stalled["scheduler"] >= BOUND_S
                # Loops that kept going are not named (the sweeper's, the claimers).
                assert not [n for n in stalled if "sweeper" in n or n.startswith("claim:")]
                release.set()
                r = await _until(c, 200)
                assert r.status_code == 200 and r.json() == {"status": "ok"}
    finally:
        release.set()
