"""Sweeper consumers: marks judged / extracted, applies recall reinforcement."""

from __future__ import annotations

from datetime import datetime

from pcm_common.domain.memory import MemoryRecord, as_utc, utcnow
from pcm_common.domain.strength import reinforce
from pcm_common.events import MemoryExtracted, MemoryRecalled, MemoryWritten
from pcm_common.resources import Resources
from pcm_common.telemetry import get_logger
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper")

APPLIED_TTL_S = 7 * 86400


class SweeperHandlers:
    def __init__(self, res: Resources, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings

    async def on_written(self, event: MemoryWritten) -> None:
        """Judging seam: the surprisal judge (local or LLM) plugs in here; until then the
        memory is only marked as seen by the judging stage."""
        found = await self.res.vectors.get(event.tenant, [event.memory_id])
        if not found:
            return  # deleted meanwhile: nothing to judge
        surprisal = dict(found[0].payload.get("surprisal") or {})
        if surprisal.get("judged_at"):
            return  # redelivery: already done
        surprisal["judged_at"] = utcnow().isoformat()
        await self.res.vectors.set_payload(event.tenant, event.memory_id, {"surprisal": surprisal})
        log.info("memory_judged", tenant=event.tenant, memory_id=event.memory_id)

    async def on_extracted(self, event: MemoryExtracted) -> None:
        patch = {
            "graph": {
                "extracted": True,
                "entities": event.entities,
                "extracted_at": event.emitted_at.isoformat(),
            }
        }
        if await self.res.vectors.set_payload(event.tenant, event.memory_id, patch):
            log.info("memory_extracted", tenant=event.tenant, memory_id=event.memory_id)

    async def on_recalled(self, event: MemoryRecalled) -> None:
        """Reinforcement of what was recalled (DESIGN §3). Each (event, memory) pair is
        applied once, so a redelivered event does not strengthen twice."""
        now = as_utc(event.now)
        ids = [i.memory_id for i in event.items[:50]]
        points = {p.id: p for p in await self.res.vectors.get(event.tenant, ids)}
        for item in event.items:
            point = points.get(item.memory_id)
            if point is None:
                continue
            marker = f"pcm:applied:recalled:{event.event_id}:{item.memory_id}"
            if await self.res.redis.exists(marker):
                continue
            await self._reinforce(event.tenant, MemoryRecord.from_payload(point.payload), now)
            await self.res.redis.set(marker, 1, ex=APPLIED_TTL_S)

    async def _reinforce(self, tenant: str, rec: MemoryRecord, now: datetime) -> None:
        if rec.pinned:
            return
        st = rec.strength
        r = reinforce(
            st.s_ref, st.t_ref, st.n, st.recalls_in_window, st.window_start, max(now, st.t_ref)
        )
        strength = st.model_copy(
            update={
                "s_ref": r.s_ref,
                "t_ref": r.t_ref,
                "n": r.n,
                "recalls_in_window": r.recalls_in_window,
                "window_start": r.window_start,
                "last_recalled_at": now,
            }
        )
        await self.res.vectors.set_payload(
            tenant, rec.id, {"strength": strength.model_dump(mode="json")}
        )
        log.debug("memory_reinforced", tenant=tenant, memory_id=rec.id, s_ref=r.s_ref)
