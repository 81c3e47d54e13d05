from __future__ import annotations

from fastapi import FastAPI

from pcm_common.messaging.events import (
    GROUP_SWEEPER_CHANGES,
    GROUP_SWEEPER_GRAPH,
    GROUP_SWEEPER_RECALLED,
    GROUP_SWEEPER_RECONSOLIDATE,
    GROUP_SWEEPER_RECONSOLIDATE_REQUESTS,
    GROUP_SWEEPER_WRITTEN,
    STREAM_CHANGED,
    STREAM_EXTRACTED,
    STREAM_RECALLED,
    STREAM_RECONSOLIDATE,
    STREAM_WRITTEN,
    MemoryChanged,
    MemoryExtracted,
    MemoryRecalled,
    MemoryWritten,
    ReconsolidationRequested,
)
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component
from pcm_sweeper.api import router
from pcm_sweeper.fact_changes import FactChanges
from pcm_sweeper.handlers import SweeperHandlers
from pcm_sweeper.jobs import Jobs
from pcm_sweeper.routine_changes import RoutineChanges
from pcm_sweeper.settings import SweeperSettings


class SweeperComponent(Component):
    name = "sweeper"

    def __init__(self, res: Resources, settings: SweeperSettings | None = None) -> None:
        super().__init__(res)
        self.settings = settings or SweeperSettings()
        self.handlers = SweeperHandlers(res, self.settings)
        self.jobs = Jobs(res, self.settings)
        self.routine_changes = RoutineChanges(res)
        self.fact_changes = FactChanges(res)

    def attach(self, app: FastAPI) -> None:
        app.state.jobs = self.jobs
        app.include_router(router)

    def consume(self) -> None:
        bus, h = self.res.bus, self.handlers
        bus.consume_batch(
            STREAM_WRITTEN,
            GROUP_SWEEPER_WRITTEN,
            MemoryWritten,
            h.on_written_batch,
            max_batch=self.settings.batch_max,
            readers=self.settings.batch_readers,
        )
        bus.consume(STREAM_RECALLED, GROUP_SWEEPER_RECALLED, MemoryRecalled, h.on_recalled)
        # Reconsolidation (with it off, its groups are still read: the pipeline settles).
        recon = h.reconsolidation
        bus.consume(STREAM_WRITTEN, GROUP_SWEEPER_RECONSOLIDATE, MemoryWritten, recon.on_written)
        bus.consume(
            STREAM_RECONSOLIDATE,
            GROUP_SWEEPER_RECONSOLIDATE_REQUESTS,
            ReconsolidationRequested,
            recon.on_requested,
        )
        bus.consume(STREAM_CHANGED, GROUP_SWEEPER_CHANGES, MemoryChanged, self._on_changed)
        bus.consume_batch(
            STREAM_EXTRACTED,
            GROUP_SWEEPER_GRAPH,
            MemoryExtracted,
            h.on_extracted_batch,
            max_batch=self.settings.batch_max,
        )

    async def _on_changed(self, event: MemoryChanged) -> None:
        """The sweeper's one consumer of change events: the routine index, then the facts
        drawn from a deleted memory."""
        await self.routine_changes.on_changed(event)
        await self.fact_changes.on_changed(event)

    async def start(self) -> None:
        await self.res.open_vectors()
        self.jobs.start()

    async def stop(self) -> None:
        await self.jobs.stop()
