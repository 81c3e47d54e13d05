"""Consumers: memory written -> entities and relations in the graph; memory deleted -> facts
removed. Needs only Redis and the graph store: the event carries the text.

Events are processed in the batches the bus reads (`Bus.consume_batch`: one
``extract_many``, one set-based ``write_facts_many``, one publish): entries arriving while a
batch is being written form the next one, so batches grow with load and an idle replica adds
no latency. Each event gets its own outcome, so the bus acknowledges, retries and
dead-letters entry by entry. Writes are MERGEs that make a memory's facts equal to its
extraction, so any redelivery leaves the graph as it was.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, retry_if_not_exception_type, stop_after_attempt
from tenacity import wait_exponential_jitter as wait_jitter

from pcm_common.extract import Extractor
from pcm_common.messaging.events import (
    STREAM_EXTRACTED,
    MemoryChanged,
    MemoryExtracted,
    MemoryWritten,
)
from pcm_common.messaging.stream_batches import Outcome
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import describe_error, get_logger
from pcm_common.stores.graph.port import Extraction
from pcm_graph_extractor.settings import GraphExtractorSettings

log = get_logger("graph-extractor")

T = TypeVar("T")


class GraphHandlers:
    def __init__(
        self,
        res: Resources,
        settings: GraphExtractorSettings,
        extractor: Extractor | None = None,
    ) -> None:
        self.res = res
        self.settings = settings
        self.extractor = extractor or _default_extractor(res, settings)
        self._schema_ready = False
        # Several readers extract concurrently (their parses overlap), but writes of one
        # replica go one at a time: concurrent batches merging the same entities made the
        # graph server abort and retry transactions.
        self._write_lock = asyncio.Lock()

    async def ensure_schema(self) -> None:
        """Best effort at start; retried before the first write if the graph was down."""
        if self._schema_ready:
            return
        try:
            await self.res.graph.ensure_schema()
            self._schema_ready = True
        except Exception as exc:
            log.warning("graph_schema_deferred", error=describe_error(exc))

    async def _retry(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Retries with exponential backoff and jitter; a ValueError (facts outside the
        closed sets) can never succeed, so it is not retried."""
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self.settings.write_attempts),
            wait=wait_jitter(multiplier=self.settings.write_backoff_s, max=5.0),
            retry=retry_if_not_exception_type(ValueError),
            reraise=True,
        ):
            with attempt:
                return await fn()
        raise AssertionError("unreachable")  # AsyncRetrying re-raises the last error

    # -- memory written -------------------------------------------------------------------

    async def on_written(self, event: MemoryWritten) -> None:
        """One event on its own (tests, tools): raises if it failed."""
        (outcome,) = await self.process_batch([event])
        if outcome is not None:
            raise outcome

    async def process_batch(self, events: list[MemoryWritten]) -> list[Outcome]:
        await self.ensure_schema()
        # A memory delivered twice in one batch is extracted once; the latest entry wins
        # (after an edit it carries the newer text).
        latest: dict[tuple[str, str], int] = {}
        for i, ev in enumerate(events):
            latest[(ev.tenant, ev.memory_id)] = i
        unique = [events[i] for i in sorted(latest.values())]
        extracted = await self._extract([ev.text for ev in unique])
        outcomes: dict[tuple[str, str], Outcome] = {}
        ready: list[tuple[MemoryWritten, Extraction]] = []
        for ev, ex in zip(unique, extracted, strict=True):
            if isinstance(ex, BaseException):
                outcomes[(ev.tenant, ev.memory_id)] = ex
            else:
                ready.append((ev, ex))
        async with self._write_lock:
            written = await self._write(ready)
        for (ev, _), err in zip(ready, written, strict=True):
            outcomes[(ev.tenant, ev.memory_id)] = err
        done = [(ev, ex) for ev, ex in ready if outcomes[(ev.tenant, ev.memory_id)] is None]
        if done:
            try:
                await self._announce(done)
            except Exception as exc:  # facts are written; the redelivery re-announces
                for ev, _ in done:
                    outcomes[(ev.tenant, ev.memory_id)] = exc
        return [outcomes[(ev.tenant, ev.memory_id)] for ev in events]

    async def _extract(self, texts: list[str]) -> list[Extraction | BaseException]:
        try:
            return list(await self.extractor.extract_many(texts))
        except Exception as exc:
            if len(texts) == 1:
                return [exc]
            # Find the failing texts one by one; the others still go through.
            log.warning("batch_extract_failed", size=len(texts), error=repr(exc))
            results = await asyncio.gather(
                *(self.extractor.extract(t) for t in texts), return_exceptions=True
            )
            return list(results)

    async def _write(self, items: list[tuple[MemoryWritten, Extraction]]) -> list[Outcome]:
        if not items:
            return []
        rows = [(ev.tenant, ev.memory_id, ex) for ev, ex in items]
        try:
            await self._retry(lambda: self.res.graph.write_facts_many(rows))
            return [None] * len(items)
        except ValueError:
            # Validation happens before any write: isolate the invalid items.
            outcomes: list[Outcome] = []
            for row in rows:
                try:
                    await self._retry(functools.partial(self.res.graph.write_facts, *row))
                    outcomes.append(None)
                except Exception as exc:
                    outcomes.append(exc)
            return outcomes
        except Exception as exc:  # graph down or slow: every event is retried by the bus
            log.warning("graph_write_failed", size=len(items), error=repr(exc))
            return [exc] * len(items)

    async def _announce(self, done: list[tuple[MemoryWritten, Extraction]]) -> None:
        events = [
            MemoryExtracted(
                tenant=ev.tenant,
                memory_id=ev.memory_id,
                entities=sorted({e.name for e in ex.entities}),
                relations=len(ex.relations),
                # The write's id, also in a batch of several requests' events.
                request_id=ev.request_id,
                # Its consumer span's context (set by the bus): the trace goes on.
                trace=ev.trace,
            )
            for ev, ex in done
        ]
        await self.res.bus.publish_many(STREAM_EXTRACTED, events)
        for e in events:
            log.info(
                "facts_written",
                request_id=e.request_id,
                tenant=e.tenant,
                memory_id=e.memory_id,
                entities=len(e.entities),
                relations=e.relations,
            )

    # -- memory changed -------------------------------------------------------------------

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change != "deleted":
            return
        await self._retry(lambda: self.res.graph.delete_memory(event.tenant, event.memory_id))
        log.info("facts_deleted", tenant=event.tenant, memory_id=event.memory_id)

    async def close(self) -> None:
        """Nothing held between batches; kept for the component's stop."""


def _default_extractor(res: Resources, settings: GraphExtractorSettings) -> Extractor:
    if settings.extractor == res.settings.extractor:
        return res.extractor  # shared with recall in the all-in-one process
    from pcm_common.extract.factory import extractor_from

    return extractor_from(settings)
