"""Demotion to `archived`, one way for every job that demotes (the demotion job, a scope's
cap): the state is written, and `pcm.memory.changed` says so. Archived memories stay
searchable and are never deleted. `restore` undoes a demotion that a recall overtook."""

from __future__ import annotations

from typing import Literal

from pcm_common.domain.memory import State
from pcm_common.messaging.events import MemoryChanged
from pcm_common.messaging.outbox import owe, pay
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import get_logger

log = get_logger("sweeper.archiving")


async def archive(res: StorePorts, tenant: str, memory_id: str, reason: str) -> None:
    await _move(res, tenant, memory_id, State.ARCHIVED, "archived", "memory_archived", reason)


async def restore(res: StorePorts, tenant: str, memory_id: str, reason: str) -> None:
    await _move(res, tenant, memory_id, State.ACTIVE, "reactivated", "memory_restored", reason)


async def _move(
    res: StorePorts,
    tenant: str,
    memory_id: str,
    state: State,
    change: Literal["archived", "reactivated"],
    logged: str,
    reason: str,
) -> None:
    """Write the memory's new state, then announce it (`change`, owed in the outbox before
    the write: `pcm_common.messaging.outbox`) and log it (`logged`)."""
    changed = [MemoryChanged(tenant=tenant, memory_id=memory_id, change=change)]
    await owe(res.redis, changed)
    await res.vectors.set_payload(tenant, memory_id, {"state": state.value})
    await pay(res, changed)
    log.info(logged, tenant=tenant, memory_id=memory_id, reason=reason)
