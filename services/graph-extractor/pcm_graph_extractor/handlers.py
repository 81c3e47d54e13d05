"""Consumers: memory written -> entities and relations in the graph; memory deleted -> facts
removed. Needs only Redis and the graph store: the event carries the text."""

from __future__ import annotations

from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from pcm_common.events import (
    STREAM_EXTRACTED,
    MemoryChanged,
    MemoryExtracted,
    MemoryWritten,
)
from pcm_common.resources import Resources
from pcm_common.telemetry import get_logger
from pcm_graph_extractor.settings import GraphExtractorSettings

log = get_logger("graph-extractor")


class GraphHandlers:
    def __init__(self, res: Resources, settings: GraphExtractorSettings) -> None:
        self.res = res
        self.settings = settings
        self._schema_ready = False

    async def ensure_schema(self) -> None:
        """Best effort at start; retried before the first write if the graph was down."""
        if self._schema_ready:
            return
        try:
            await self.res.graph.ensure_schema()
            self._schema_ready = True
        except Exception as exc:
            log.warning("graph_schema_deferred", error=repr(exc))

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self.settings.write_attempts),
            wait=wait_exponential(multiplier=0.2, max=2.0),
            reraise=True,
        )

    async def on_written(self, event: MemoryWritten) -> None:
        await self.ensure_schema()
        extraction = await self.res.extractor.extract(event.text)
        async for attempt in self._retrying():
            with attempt:
                await self.res.graph.write_facts(event.tenant, event.memory_id, extraction)
        names = sorted({e.name for e in extraction.entities})
        await self.res.bus.publish(
            STREAM_EXTRACTED,
            MemoryExtracted(
                tenant=event.tenant,
                memory_id=event.memory_id,
                entities=names,
                relations=len(extraction.relations),
            ),
        )
        log.info(
            "facts_written",
            tenant=event.tenant,
            memory_id=event.memory_id,
            entities=len(names),
            relations=len(extraction.relations),
        )

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change != "deleted":
            return
        async for attempt in self._retrying():
            with attempt:
                await self.res.graph.delete_memory(event.tenant, event.memory_id)
        log.info("facts_deleted", tenant=event.tenant, memory_id=event.memory_id)
