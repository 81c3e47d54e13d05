"""The last runs of each lifecycle job, per tenant (the inspector's pipeline page, `GET
/v1/jobs/runs`): when a run started and ended, what started it, how it ended and how many
memories it changed.

One list per job and tenant (`keys.job_runs`), newest first, each entry a run as JSON,
trimmed to `KEEP` as runs are recorded. Every sweeper replica writes here, so the runs of
all replicas are seen together; the `pcm_job_runs_total` counter only counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ValidationError
from redis.asyncio import Redis

from pcm_common.stores.redis import keys

# Runs kept per job and tenant: enough to see a failure among the runs around it.
KEEP = 10
# An error is kept to its start: a stack of nested messages says nothing more on a page.
ERROR_CHARS = 300

Trigger = Literal["schedule", "request", "idle"]
Outcome = Literal["ok", "failed"]


class JobRun(BaseModel):
    job: str
    trigger: Trigger  # the scheduler, `POST /v1/jobs/{name}`, or a quiet tenant (idle)
    started_at: datetime
    finished_at: datetime
    duration_ms: float
    outcome: Outcome
    changed: int | None = None  # memories the run changed (absent when it failed)
    error: str | None = None  # why it failed: the exception's type and message
    now: datetime | None = None  # the simulated time the request asked for, if any


async def record(redis: Redis, tenant: str, run: JobRun) -> None:
    """Keep `run` as the newest of its job's runs on `tenant`."""
    key = keys.job_runs(run.job, tenant)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.lpush(key, run.model_dump_json(exclude_none=True))
        pipe.ltrim(key, 0, KEEP - 1)
        await pipe.execute()


async def last_runs(
    redis: Redis, tenant: str, jobs: Sequence[str], limit: int = KEEP
) -> dict[str, list[JobRun]]:
    """The newest `limit` runs of each of `jobs` on `tenant`, newest first (one round trip).
    An entry that no longer parses (written by another version) is left out."""
    async with redis.pipeline(transaction=False) as pipe:
        for job in jobs:
            pipe.lrange(keys.job_runs(job, tenant), 0, limit - 1)
        raw: list[list[bytes | str]] = await pipe.execute()
    out: dict[str, list[JobRun]] = {}
    for job, entries in zip(jobs, raw, strict=True):
        runs = []
        for entry in entries:
            try:
                runs.append(JobRun.model_validate_json(entry))
            except ValidationError:
                continue
        out[job] = runs
    return out


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
