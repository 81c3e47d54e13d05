"""Run a lifecycle job now for the caller's tenant, optionally at a simulated time: used by
operators, the lifecycle simulation and tests (the scheduler runs them on its own otherwise)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict

from pcm_common.domain.clock import as_utc
from pcm_common.runtime.http import (
    JSON_BODY,
    KEYED,
    ApiError,
    Res,
    Tenant,
    error_responses,
    refuse_future,
    state_of,
)
from pcm_common.stores.redis.job_runs import KEEP, JobRun, last_runs
from pcm_sweeper.jobs import Jobs

router = APIRouter(prefix="/v1", tags=["jobs"], responses=KEYED)

# The earliest simulated clock a job takes: the jobs look back from `now` (90 days of
# demotion, hours of consolidation), and from year 1 that date arithmetic overflowed (500).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


class JobIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    now: datetime | None = None


def jobs_of(request: Request) -> Jobs:
    return state_of(request, "jobs", Jobs)


@router.get("/jobs")
async def list_jobs(_: Tenant, jobs: Annotated[Jobs, Depends(jobs_of)]) -> dict[str, Any]:
    return {"jobs": sorted(jobs.jobs)}


class JobRuns(BaseModel):
    job: str
    interval_s: float  # the scheduler runs it at most once per this interval per tenant
    runs: list[JobRun]  # newest first


class JobRunsOut(BaseModel):
    jobs: list[JobRuns]


@router.get("/jobs/runs", responses=error_responses(404))
async def job_runs(
    tenant: Tenant,
    jobs: Annotated[Jobs, Depends(jobs_of)],
    res: Res,
    job: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    limit: Annotated[int, Query(ge=1, le=KEEP)] = 5,
) -> JobRunsOut:
    """The caller's tenant's last runs of each lifecycle job (or of `job`), newest first:
    started and finished, by the scheduler or a request, ok or failed, memories changed.
    Runs on other tenants are never listed."""
    if job is not None and job not in jobs.jobs:
        raise ApiError(404, "unknown_job", f"one of {sorted(jobs.jobs)}")
    names = [job] if job is not None else sorted(jobs.jobs)
    found = await last_runs(res.redis, tenant, names, limit)
    return JobRunsOut(
        jobs=[JobRuns(job=n, interval_s=jobs.intervals[n], runs=found[n]) for n in names]
    )


# 403: a data key running an admin job (listing them needs no role).
@router.post("/jobs/{name}", responses={**JSON_BODY, **error_responses(403, 404, 409)})
async def run_job(
    name: str,
    tenant: Tenant,
    jobs: Annotated[Jobs, Depends(jobs_of)],
    body: JobIn | None = None,  # no body: now
) -> dict[str, Any]:
    if name not in jobs.jobs:
        raise ApiError(404, "unknown_job", f"one of {sorted(jobs.jobs)}")
    at = as_utc(body.now) if body is not None and body.now else None
    if at is not None and at < EARLIEST:
        raise ApiError(422, "invalid_request", "now is earlier than 1970-01-01")
    # The rule of writes and recalls: a job at a far-future `now` archived every memory.
    refuse_future(at, jobs.settings.max_future_s, "now")
    changed = await jobs.run(name, at, tenant=tenant)
    if changed is None:
        raise ApiError(409, "job_running", "this job is already running for the tenant")
    return {"job": name, "changed": changed}
