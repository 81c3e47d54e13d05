from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from pcm_common.data.reembed import Reembedding
from pcm_common.feedback.service import FeedbackService
from pcm_common.runtime.http import ReadinessCheck
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component
from pcm_ingest.api import router
from pcm_ingest.erasure_api import router as erasure_router
from pcm_ingest.export_api import router as export_router
from pcm_ingest.feedback_api import router as feedback_router
from pcm_ingest.governance_api import router as governance_router
from pcm_ingest.reembed_api import router as reembed_router
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings


class IngestComponent(Component):
    name = "ingest"

    def __init__(self, res: Resources, settings: IngestSettings | None = None) -> None:
        super().__init__(res)
        self.settings = settings or IngestSettings()
        self.service = IngestService(res, self.settings)
        self.memories = self.service.edits()
        # `wrong` asks the sweeper for reconsolidation (`FeedbackService.request_rewrite`).
        self.feedback = FeedbackService(res.redis, res.vectors, res.bus, self.settings)
        self.reembed = Reembedding(res, page=self.settings.reembed_page)

    def attach(self, app: FastAPI) -> None:
        app.state.ingest = self.service
        app.state.memories = self.memories
        app.state.ingest_resources = self.res
        app.include_router(router)
        app.include_router(governance_router)
        app.include_router(erasure_router)
        app.include_router(export_router)
        app.state.memory_feedback = self.feedback
        app.include_router(feedback_router)
        app.state.reembed = self.reembed
        app.include_router(reembed_router)

    def checks(self) -> dict[str, ReadinessCheck]:
        async def vectors() -> dict[str, Any]:
            await self.res.vectors.count("__readyz__")
            return {
                "ok": True,
                "backend": self.res.vectors.backend,
                "strength_overlay": self.res.settings.strength_overlay,
            }

        return {"vectors": vectors}

    async def start(self) -> None:
        self.service.screens.start()
        await self.res.open_vectors()
        # A re-embedding job this process was running when it stopped: its dual writes
        # are on again before the first write.
        await self.reembed.resume()
        if self.res.embedder.is_local:
            # Load the batch model (and for an int8 one, make its copy on a machine
            # without one) before the first write, not inside it.
            await self.res.embedder.embed(["warm up", "warm up the model"])

    async def stop(self) -> None:
        self.service.screens.stop()
        await self.reembed.stop()
