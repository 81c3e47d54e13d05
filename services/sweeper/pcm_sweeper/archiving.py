"""Demotion to `archived`, one way for every job that demotes (the demotion job, a scope's
cap): the state is written, and `pcm.memory.changed` says so. Archived memories stay
searchable and are never deleted. `restore` undoes a demotion that a recall overtook."""

from __future__ import annotations

from pcm_common.domain.memory import State
from pcm_common.events import STREAM_CHANGED, MemoryChanged
from pcm_common.resources import Resources
from pcm_common.telemetry import get_logger

log = get_logger("sweeper.archiving")


async def archive(res: Resources, tenant: str, memory_id: str, reason: str) -> None:
    await res.vectors.set_payload(tenant, memory_id, {"state": State.ARCHIVED.value})
    await res.bus.publish(
        STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=memory_id, change="archived")
    )
    log.info("memory_archived", tenant=tenant, memory_id=memory_id, reason=reason)


async def restore(res: Resources, tenant: str, memory_id: str, reason: str) -> None:
    await res.vectors.set_payload(tenant, memory_id, {"state": State.ACTIVE.value})
    await res.bus.publish(
        STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=memory_id, change="reactivated")
    )
    log.info("memory_restored", tenant=tenant, memory_id=memory_id, reason=reason)
