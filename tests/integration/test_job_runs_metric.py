"""`pcm_job_runs_total` on a real Redis: the scheduler's runs counted per tenant by job and
outcome (ok, failed, locked by another replica); one tenant's failure does not stop the
others' runs."""

from __future__ import annotations

import uuid
from datetime import datetime

from prometheus_client import REGISTRY, generate_latest

from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.keys import TENANTS
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS


def _runs(job: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("pcm_job_runs_total", {"job_name": job, "outcome": outcome})
    return value or 0.0


async def test_scheduled_runs_are_counted_by_job_and_outcome() -> None:
    settings = SweeperSettings(redis_url=f"{TEST_REDIS}/13")
    res = Resources(settings)
    jobs = Jobs(res, settings)
    run = uuid.uuid4().hex[:8]
    good, bad, busy = f"good-{run}", f"bad-{run}", f"busy-{run}"
    ran: list[str] = []

    async def flaky(tenant: str, now: datetime) -> int:
        if tenant == bad:
            raise RuntimeError("store refused")
        ran.append(tenant)
        return 1

    name = f"flaky_{run}"
    jobs.jobs[name] = flaky
    jobs.intervals[name] = 60
    try:
        await res.redis.sadd(TENANTS, good, bad, busy)
        mine = {good, bad, busy}
        every = jobs.tenants

        async def these() -> list[str]:
            # The database's other tests' tenants are left out of this job's counts.
            return [t for t in await every() if t in mine]

        jobs.tenants = these  # type: ignore[method-assign]
        # Another replica holds busy's lock for this job.
        await res.redis.set(rkeys.job_lock(name, busy), "elsewhere", ex=60)
        assert await jobs.run_scheduled(name) == 1
        assert ran == [good]  # bad failed, busy was skipped; good still ran
        assert (_runs(name, "ok"), _runs(name, "failed"), _runs(name, "locked")) == (1, 1, 1)
        # Within the interval the slots are taken: nothing runs, nothing is counted.
        assert await jobs.run_scheduled(name) == 0
        assert (_runs(name, "ok"), _runs(name, "failed"), _runs(name, "locked")) == (1, 1, 1)
        # The failure is exported: /metrics shows it (the alert's input).
        text = generate_latest().decode()
        assert f'pcm_job_runs_total{{job_name="{name}",outcome="failed"}} 1.0' in text
    finally:
        await res.redis.srem(TENANTS, good, bad, busy)
        for t in (good, bad, busy):
            await res.redis.delete(rkeys.job_lock(name, t), rkeys.job_slot(name, t))
        await res.aclose()
