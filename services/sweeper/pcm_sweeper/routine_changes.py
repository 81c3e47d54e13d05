"""Keeps the routine index (pcm_common.stores.redis.routines) in step with later changes to a
memory: a repeat merged into it at ingest is one more entry of its routine, and a deleted
memory leaves its routine. Consumer of `pcm.memory.changed` (sweeper-changes group)."""

from __future__ import annotations

from pcm_common.messaging.events import MemoryChanged
from pcm_common.ports import RoutinePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_sweeper.judgement import event_times

log = get_logger("sweeper.routines")


class RoutineChanges:
    def __init__(self, res: RoutinePorts) -> None:
        self.res = res

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change == "deleted":
            await self.res.routines.forget(event.tenant, event.memory_id)
        elif event.change == "repeated":
            found = await self.res.vectors.get(event.tenant, [event.memory_id])
            if not found:
                return  # deleted since: its delete event removes it
            # All of its times: idempotent under redelivery. A memory not yet judged is not
            # in a routine; its judging reads the repeats from the payload.
            added = await self.res.routines.add_times(
                event.tenant, event.memory_id, event_times(found[0].payload)
            )
            log.debug("routine_repeat", tenant=event.tenant, memory_id=event.memory_id, added=added)
