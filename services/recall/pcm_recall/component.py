from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from pcm_common.messaging.events import STREAM_CHANGED, MemoryChanged
from pcm_common.runtime.http import ReadinessCheck
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component
from pcm_recall.api import router
from pcm_recall.service import RecallService
from pcm_recall.settings import RecallSettings


class RecallComponent(Component):
    name = "recall"

    def __init__(self, res: Resources, settings: RecallSettings | None = None) -> None:
        super().__init__(res)
        self.settings = settings or RecallSettings()
        self.service = RecallService(res, self.settings)

    def attach(self, app: FastAPI) -> None:
        app.state.recall = self.service
        app.include_router(router)

    def consume(self) -> None:
        self.res.bus.listen(STREAM_CHANGED, MemoryChanged, self.service.pinned.on_changed)

    def checks(self) -> dict[str, ReadinessCheck]:
        async def models() -> dict[str, Any]:
            return {
                "ok": True,
                "embedding": self.res.settings.embedding_model,
                "reranker": self.service.reranker.name
                if self.service.reranker
                else "none (hybrid rank fusion, cosine floor)",
            }

        return {"models": models}

    async def start(self) -> None:
        await self.res.open_vectors()
        # Load the models before the first request, not inside its latency budget.
        await self.res.embedder.embed_query("warm up")
        if self.service.linker is not None:
            await self.res.extractor.extract("Warm up the entity extractor.")
