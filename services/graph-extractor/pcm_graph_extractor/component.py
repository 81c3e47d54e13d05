from __future__ import annotations

from typing import Any

from pcm_common.messaging.events import (
    GROUP_GRAPH,
    GROUP_GRAPH_CHANGES,
    STREAM_CHANGED,
    STREAM_WRITTEN,
    MemoryChanged,
    MemoryWritten,
)
from pcm_common.runtime.http import ReadinessCheck
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component
from pcm_graph_extractor.handlers import GraphHandlers
from pcm_graph_extractor.settings import GraphExtractorSettings


class GraphExtractorComponent(Component):
    name = "graph-extractor"

    def __init__(self, res: Resources, settings: GraphExtractorSettings | None = None) -> None:
        super().__init__(res)
        self.settings = settings or GraphExtractorSettings()
        self.handlers = GraphHandlers(res, self.settings)

    def consume(self) -> None:
        bus = self.res.bus
        bus.consume_batch(
            STREAM_WRITTEN,
            GROUP_GRAPH,
            MemoryWritten,
            self.handlers.process_batch,
            max_batch=self.settings.batch_max,
            readers=self.settings.batch_readers,
        )
        bus.consume(STREAM_CHANGED, GROUP_GRAPH_CHANGES, MemoryChanged, self.handlers.on_changed)

    def checks(self) -> dict[str, ReadinessCheck]:
        async def graph() -> dict[str, Any]:
            return {"ok": await self.res.graph.ping(), "uri": self.res.settings.neo4j_uri}

        return {"graph": graph}

    async def start(self) -> None:
        await self.handlers.ensure_schema()

    async def stop(self) -> None:
        await self.handlers.close()
