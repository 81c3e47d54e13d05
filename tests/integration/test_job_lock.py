"""The sweeper's job lock on a real Redis: held for as long as the job runs, even past its
TTL, so a second replica never runs the same job on the same tenant alongside."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis import keys as rkeys
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS


async def test_a_job_longer_than_its_lock_ttl_keeps_the_lock() -> None:
    settings = SweeperSettings(redis_url=f"{TEST_REDIS}/13", lock_ttl_s=1)
    res = Resources(settings)
    jobs, other = Jobs(res, settings), Jobs(res, settings)
    tenant = f"lock-{uuid.uuid4().hex[:8]}"
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(t: str, now: datetime) -> int:
        started.set()
        await release.wait()
        return 7

    for j in (jobs, other):
        j.jobs["slow"] = slow
    try:
        first = asyncio.create_task(jobs.run("slow", tenant=tenant))
        await started.wait()
        await asyncio.sleep(2.5)  # past the 1 s TTL: without extension the lock is gone
        assert await res.redis.ttl(rkeys.job_lock("slow", tenant)) > 0
        assert await other.run("slow", tenant=tenant) is None  # "already running"
        release.set()
        assert await first == 7
        # Released at the end: the next run takes it.
        assert await other.run("slow", tenant=tenant) == 7
        assert not await res.redis.exists(rkeys.job_lock("slow", tenant))
    finally:
        release.set()
        await res.aclose()
