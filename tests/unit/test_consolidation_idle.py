"""Consolidation on idle (`Jobs.run_idle`, `PCM_CONSOLIDATION_IDLE_S`) on the in-memory
doubles: a tenant quiet since its last write is consolidated once per quiet spell."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import fakeredis
import pytest

from pcm_common.stores.redis import keys
from pcm_common.stores.redis.job_runs import last_runs
from pcm_common.testing import MemoryPorts
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.settings import SweeperSettings


@pytest.fixture
async def world() -> AsyncIterator[tuple[MemoryPorts, IngestService, Jobs]]:
    redis = fakeredis.FakeAsyncRedis()
    ports = MemoryPorts(redis)
    ingest = IngestService(ports, IngestSettings(firewall_workers=0))
    jobs = Jobs(ports, SweeperSettings(consolidation_idle_s=600, distil=False))
    try:
        yield ports, ingest, jobs
    finally:
        ingest.screens.stop()
        await redis.aclose()


async def test_a_quiet_tenant_is_consolidated_once_per_quiet_spell(
    world: tuple[MemoryPorts, IngestService, Jobs],
) -> None:
    ports, ingest, jobs = world
    t = f"t-{uuid.uuid4().hex[:6]}"
    await ingest.store(t, [MemoryIn(text="The staging database moved to Frankfurt.")])
    assert await ports.redis.get(keys.last_write(t)) is not None
    await jobs.run_idle()  # written just now: not idle yet
    assert (await last_runs(ports.redis, t, ["consolidation"]))["consolidation"] == []

    quiet = f"{time.time() - 601:.3f}"
    await ports.redis.set(keys.last_write(t), quiet)
    await jobs.run_idle()
    (run,) = (await last_runs(ports.redis, t, ["consolidation"]))["consolidation"]
    assert run.trigger == "idle" and run.outcome == "ok"
    await jobs.run_idle()  # the same quiet spell: not again
    assert len((await last_runs(ports.redis, t, ["consolidation"]))["consolidation"]) == 1
