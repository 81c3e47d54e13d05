"""Follows every deleted memory to the distilled facts drawn from it
(`pcm_common.data.derived_facts`) once more, from its `deleted` change event. The deleting
path already did it; this pass is for a process that stopped between the delete and that
step (the event was owed in the outbox before the delete, so it still goes out), and for a
fact that distillation wrote from a source being deleted at that moment. Idempotent: a
fact already dropped or trimmed is not found again. Consumer of `pcm.memory.changed`
(sweeper-changes group)."""

from __future__ import annotations

from pcm_common.data.forgetting import Forgetter
from pcm_common.messaging.events import MemoryChanged
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import get_logger

log = get_logger("sweeper.facts")


class FactChanges:
    def __init__(self, res: StorePorts) -> None:
        self.forgetter = Forgetter(res)

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change != "deleted":
            return
        dropped, trimmed = await self.forgetter.facts.follow(
            event.tenant, [event.memory_id], "deleted_event"
        )
        if dropped or trimmed:
            log.info(
                "facts_followed_late",
                tenant=event.tenant,
                memory_id=event.memory_id,
                dropped=dropped,
                trimmed=trimmed,
            )
