"""Scheduled jobs. Each runs under a Redis lock so several sweeper replicas never run the same
job at once, and each is idempotent so a job cut short is simply run again."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from pcm_common.domain.memory import MemoryRecord, utcnow
from pcm_common.domain.strength import decayed, should_demote
from pcm_common.events import STREAM_CHANGED, STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.resources import TENANTS_KEY, Resources
from pcm_common.stores.vectors import Filter
from pcm_common.telemetry import get_logger
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper.jobs")

Job = Callable[[str, datetime], Awaitable[int]]

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class Jobs:
    def __init__(self, res: Resources, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        self.jobs: dict[str, Job] = {"demotion": self.demote, "repair": self.repair}
        self._task: asyncio.Task[None] | None = None

    async def tenants(self) -> list[str]:
        raw = await self.res.redis.smembers(TENANTS_KEY)
        return sorted(t.decode() if isinstance(t, bytes) else t for t in raw)

    async def run(
        self, name: str, now: datetime | None = None, tenant: str | None = None
    ) -> int | None:
        """Run one job (over every tenant, or one) if its lock is free; None when another
        replica holds it."""
        token = uuid.uuid4().hex
        key = f"pcm:lock:job:{name}" + (f":{tenant}" if tenant else "")
        if not await self.res.redis.set(key, token, nx=True, ex=self.settings.lock_ttl_s):
            return None
        try:
            at = now or utcnow()
            done = 0
            for t in [tenant] if tenant else await self.tenants():
                done += await self.jobs[name](t, at)
            log.info("job_done", job=name, tenant=tenant, changed=done)
            return done
        finally:
            await self.res.redis.eval(_RELEASE, 1, key, token)

    async def demote(self, tenant: str, now: datetime) -> int:
        """Weak and long-unrecalled memories become `archived`: still searchable on request,
        never deleted."""
        changed = 0
        offset: str | None = None
        while True:
            points, offset = await self.res.vectors.scroll(
                tenant,
                flt=Filter(must={"state": "active", "pinned": False}),
                limit=256,
                offset=offset,
            )
            for p in points:
                st = MemoryRecord.from_payload(p.payload).strength
                s = decayed(st.s_ref, st.t_ref, st.n, now)
                if should_demote(s, st.last_recalled_at, st.t_ref, now):
                    await self.res.vectors.set_payload(tenant, p.id, {"state": "archived"})
                    await self.res.bus.publish(
                        STREAM_CHANGED,
                        MemoryChanged(tenant=tenant, memory_id=p.id, change="archived"),
                    )
                    changed += 1
            if offset is None:
                return changed

    async def repair(self, tenant: str, now: datetime) -> int:
        """Memories whose graph extraction never completed are published again (the consumers
        are idempotent, so a duplicate is harmless)."""
        grace = now - timedelta(seconds=self.settings.repair_grace_s)
        republished = 0
        offset: str | None = None
        while True:
            points, offset = await self.res.vectors.scroll(
                tenant, flt=Filter(must={"graph.extracted": False}), limit=256, offset=offset
            )
            for p in points:
                rec = MemoryRecord.from_payload(p.payload)
                if rec.ingested_at > grace:
                    continue
                await self.res.bus.publish(
                    STREAM_WRITTEN,
                    MemoryWritten(
                        tenant=tenant,
                        memory_id=rec.id,
                        text=rec.text,
                        created_at=rec.created_at,
                        scope=rec.scope.value,
                        workspace=rec.workspace,
                        project=rec.project,
                        status="repair",
                    ),
                )
                republished += 1
            if offset is None:
                return republished

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.job_interval_s)
            for name in self.jobs:
                try:
                    await self.run(name)
                except Exception as exc:  # a failed job is retried next tick
                    log.error("job_failed", job=name, error=repr(exc))
