"""The lifecycle jobs' last runs (`GET /v1/jobs/runs`): a job run through the HTTP API is
listed with its start, end, outcome and count, for its own tenant only; the scheduler's
runs are recorded too, a failure with its error, and each job keeps its last ten. Read
through pcm-client (`job_runs`), the refusals of bad queries raw."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from pcm_client import AsyncPcmClient, JobRun, NotFound
from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis import job_runs, keys
from pcm_common.stores.redis.keys import TENANTS
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS


async def _runs(
    client: AsyncPcmClient, job: str | None = None, limit: int | None = None
) -> list[JobRun]:
    return [r for j in (await client.job_runs(job, limit)).jobs for r in j.runs]


async def test_a_job_run_through_the_api_is_its_last_run(
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient, client_a: httpx.AsyncClient
) -> None:
    before = datetime.now(UTC)
    ran = await pcm_a.consolidate()
    last = (await _runs(pcm_a, job="consolidation", limit=1))[0]
    assert last.job == "consolidation" and last.trigger == "request"
    assert last.outcome == "ok" and last.changed == ran.changed
    assert before - timedelta(seconds=1) <= last.started_at <= last.finished_at <= datetime.now(UTC)
    assert last.now is None and last.error is None
    # A simulated clock is shown as such; the newest run comes first.
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    await pcm_a.run_job("demotion", at)
    listed = {j.job: j for j in (await pcm_a.job_runs()).jobs}
    assert set(listed) == set((await pcm_a.jobs())["jobs"])
    assert listed["demotion"].runs[0].now == at
    assert listed["demotion"].interval_s > 0
    # Tenant B sees none of tenant A's runs.
    theirs = {r.started_at for r in await _runs(pcm_b)}
    assert not theirs & {r.started_at for r in await _runs(pcm_a)}
    with pytest.raises(NotFound) as nf:
        await pcm_a.job_runs("nope")
    assert nf.value.code == "unknown_job"
    # Out-of-range limits are the wire's refusals, sent raw.
    for params, status in (({"job": "nope"}, 404), ({"limit": 0}, 422), ({"limit": 11}, 422)):
        got = await client_a.get("/v1/jobs/runs", params=params)
        assert got.status_code == status, (params, got.text)


async def test_scheduled_runs_are_kept_with_their_failures() -> None:
    settings = SweeperSettings(redis_url=f"{TEST_REDIS}/13")
    res = Resources(settings)
    jobs = Jobs(res, settings)
    run = uuid.uuid4().hex[:8]
    good, bad = f"good-{run}", f"bad-{run}"
    name = f"flaky_{run}"

    async def flaky(tenant: str, now: datetime) -> int:
        if tenant == bad:
            raise RuntimeError("store refused")
        return 3

    jobs.jobs[name] = flaky
    jobs.intervals[name] = 60

    async def these() -> list[str]:
        return [good, bad]  # the database's other tenants are not this test's

    jobs.tenants = these  # type: ignore[method-assign]
    try:
        await res.redis.sadd(TENANTS, good, bad)
        await jobs.run_scheduled(name)
        ok = (await job_runs.last_runs(res.redis, good, [name]))[name]
        failed = (await job_runs.last_runs(res.redis, bad, [name]))[name]
        assert [(r.trigger, r.outcome, r.changed) for r in ok] == [("schedule", "ok", 3)]
        assert [(r.outcome, r.changed, r.error) for r in failed] == [
            ("failed", None, "RuntimeError: store refused")
        ]
        # Each job keeps its last ten runs, newest first.
        for _ in range(12):
            await jobs.run(name, tenant=good)
        kept = (await job_runs.last_runs(res.redis, good, [name]))[name]
        assert len(kept) == job_runs.KEEP and kept[-1].trigger == "request"
        assert kept[0].started_at >= kept[1].started_at
    finally:
        await res.redis.srem(TENANTS, good, bad)
        for t in (good, bad):
            await res.redis.delete(keys.job_runs(name, t), keys.job_slot(name, t))
        await res.aclose()
