"""Data for the inspector's views, shared by its API and browser tests: for attention, a
swimming routine that goes on (with one surprising entry) and piano lessons that stopped;
for the pipeline, a dead letter and a failed job run."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from redis.asyncio import Redis

from pcm_cli.testing import settle
from pcm_common.messaging.events import STREAM_CHANGED, STREAM_DLQ, DeadLetter, MemoryChanged
from pcm_common.stores.redis import job_runs

SURPRISE = "Swam 140 lengths at the Eastside pool this morning."


def routines(now: datetime | None = None) -> list[tuple[str, datetime]]:
    now = now or datetime.now(UTC)
    swims = [
        (
            SURPRISE
            if i == 15
            else f"Swam {30 + i % 4} lengths at the Eastside pool this morning.",
            now - timedelta(days=40 - 2 * i, hours=1),
        )
        for i in range(20)
    ]
    piano = [
        (
            f"Weekly piano lesson with Mr Okafor: {40 + (i * 7) % 12} minutes.",
            now - timedelta(days=150 - 7 * i),
        )
        for i in range(10)
    ]
    return [*piano, *swims]


async def seed_routines(client: httpx.AsyncClient, user_id: str) -> None:
    """Written one by one, oldest first, as an agent would; judged by the sweeper."""
    for text, at in routines():
        got = await client.post(
            "/v1/memories", json={"text": text, "created_at": at.isoformat(), "user_id": user_id}
        )
        assert got.status_code == 201, got.text
    await settle(client)


async def seed_dead_letter(redis: Redis, tenant: str) -> tuple[str, dict[str, Any]]:
    """A letter as the bus writes one, of a harmless event (a pin of no memory) that failed:
    its id in `pcm.dlq` and the event's body."""
    body = MemoryChanged(tenant=tenant, memory_id=str(uuid.uuid4()), change="pinned")
    letter = DeadLetter(
        stream=STREAM_CHANGED,
        group="graph-extractor-changes",
        entry_id="1-0",
        error="RuntimeError('graph store down')",
        deliveries=5,
        body=body.model_dump(mode="json"),
    )
    entry = await redis.xadd(STREAM_DLQ, {"data": letter.model_dump_json()})
    return entry.decode(), letter.body


async def seed_failed_run(redis: Redis, tenant: str, job: str) -> None:
    """A scheduled run of `job` on `tenant` that failed, kept as the sweeper keeps one."""
    now = datetime.now(UTC)
    run = job_runs.JobRun(
        job=job,
        trigger="schedule",
        started_at=now - timedelta(seconds=2),
        finished_at=now,
        duration_ms=2000.0,
        outcome="failed",
        error="ServiceUnavailable: graph store down",
    )
    await job_runs.record(redis, tenant, run)
