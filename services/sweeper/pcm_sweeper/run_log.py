"""Each run of a lifecycle job, timed and kept as one of its tenant's last runs
(`pcm_common.stores.redis.job_runs`), whether the scheduler or a request started it."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import datetime

from redis.asyncio import Redis

from pcm_common.domain.clock import utcnow
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import job_runs
from pcm_common.stores.redis.job_runs import JobRun, Trigger

log = get_logger("sweeper.run_log")


async def logged(
    redis: Redis,
    tenant: str,
    job: str,
    trigger: Trigger,
    simulated: datetime | None,
    run: Awaitable[int],
) -> int:
    """Await `run` (the job on `tenant`) and record how it went; its answer or its
    exception passes through unchanged. A cancelled run (the service stopping) is not
    recorded: it ended neither way, and is run again."""
    started, t0 = utcnow(), time.perf_counter()
    try:
        changed = await run
    except Exception as exc:
        await _keep(redis, tenant, job, trigger, simulated, started, t0, error=exc)
        raise
    await _keep(redis, tenant, job, trigger, simulated, started, t0, changed=changed)
    return changed


async def _keep(
    redis: Redis,
    tenant: str,
    job: str,
    trigger: Trigger,
    simulated: datetime | None,
    started: datetime,
    t0: float,
    *,
    changed: int | None = None,
    error: Exception | None = None,
) -> None:
    run = JobRun(
        job=job,
        trigger=trigger,
        started_at=started,
        finished_at=utcnow(),
        duration_ms=round((time.perf_counter() - t0) * 1000, 1),
        outcome="ok" if error is None else "failed",
        changed=changed,
        error=None if error is None else job_runs.error_text(error),
        now=simulated,
    )
    try:
        await job_runs.record(redis, tenant, run)
    except Exception as exc:  # Redis away: the run's own outcome stands, only its note is lost
        log.warning("job_run_not_recorded", job=job, tenant=tenant, error=repr(exc)[:200])
