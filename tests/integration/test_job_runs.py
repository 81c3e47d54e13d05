"""The lifecycle jobs' last runs (`GET /v1/jobs/runs`): a job run through the HTTP API is
listed with its start, end, outcome and count, for its own tenant only; the scheduler's
runs are recorded too, a failure with its error, and each job keeps its last ten."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx

from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis import job_runs, keys
from pcm_common.stores.redis.keys import TENANTS
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS


async def _runs(client: httpx.AsyncClient, **params: str | int) -> list[dict[str, object]]:
    got = await client.get("/v1/jobs/runs", params=params)
    assert got.status_code == 200, got.text
    return [r for j in got.json()["jobs"] for r in j["runs"]]


async def test_a_job_run_through_the_api_is_its_last_run(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    before = datetime.now(UTC)
    ran = await client_a.post("/v1/jobs/consolidation")
    assert ran.status_code == 200, ran.text
    last = (await _runs(client_a, job="consolidation", limit=1))[0]
    assert last["job"] == "consolidation" and last["trigger"] == "request"
    assert last["outcome"] == "ok" and last["changed"] == ran.json()["changed"]
    started = datetime.fromisoformat(str(last["started_at"]))
    finished = datetime.fromisoformat(str(last["finished_at"]))
    assert before - timedelta(seconds=1) <= started <= finished <= datetime.now(UTC)
    assert last["now"] is None and last["error"] is None
    # A simulated clock is shown as such; the newest run comes first.
    at = "2026-01-02T03:04:05+00:00"
    assert (await client_a.post("/v1/jobs/demotion", json={"now": at})).status_code == 200
    every = await client_a.get("/v1/jobs/runs")
    listed = {j["job"]: j for j in every.json()["jobs"]}
    assert set(listed) == set((await client_a.get("/v1/jobs")).json()["jobs"])
    assert listed["demotion"]["runs"][0]["now"] == at.replace("+00:00", "Z")
    assert listed["demotion"]["interval_s"] > 0
    # Tenant B sees none of tenant A's runs.
    theirs = {str(r["started_at"]) for r in await _runs(client_b)}
    assert not theirs & {str(r["started_at"]) for r in await _runs(client_a)}
    for params, status in (({"job": "nope"}, 404), ({"limit": 0}, 422), ({"limit": 11}, 422)):
        got = await client_a.get("/v1/jobs/runs", params=params)
        assert got.status_code == status, (params, got.text)
    assert (await client_a.get("/v1/jobs/runs", params={"job": "nope"})).json()[
        "error"
    ] == "unknown_job"


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
