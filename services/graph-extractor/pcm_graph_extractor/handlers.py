"""Consumers: memory written -> entities and relations in the graph; memory deleted -> facts
removed. Needs only Redis and the graph store: the event carries the text.

Events are processed in batches (one ``extract_many``, one set-based ``write_facts_many``)
formed from the entries the bus delivers concurrently: an event arriving while a batch is
being written joins the next batch, so batches grow with load and an idle replica adds no
latency. Each event's handler still returns or raises on its own, so the bus acknowledges,
retries and dead-letters entry by entry. Writes are MERGEs that make a memory's facts equal
to its extraction, so any redelivery leaves the graph as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from tenacity import AsyncRetrying, retry_if_not_exception_type, stop_after_attempt
from tenacity import wait_exponential_jitter as wait_jitter

from pcm_common.events import (
    STREAM_EXTRACTED,
    MemoryChanged,
    MemoryExtracted,
    MemoryWritten,
)
from pcm_common.extract import Extractor
from pcm_common.resources import Resources
from pcm_common.stores.graph import Extraction
from pcm_common.telemetry import get_logger
from pcm_graph_extractor.settings import GraphExtractorSettings

log = get_logger("graph-extractor")

T = TypeVar("T")
Outcome = BaseException | None  # None: done; an exception: that event failed


class MicroBatcher(Generic[T]):
    """Coalesces concurrent ``submit`` calls into batches for ``process``.

    ``process`` gets the batch and returns one outcome per item. The first submit starts a
    drain task that yields once (so entries delivered in the same tick join it), then keeps
    taking up to ``max_batch`` waiting items until none are left.
    """

    def __init__(
        self,
        process: Callable[[list[T]], Awaitable[list[Outcome]]],
        max_batch: int,
    ) -> None:
        self._process = process
        self._max = max(1, max_batch)
        self._waiting: list[tuple[T, asyncio.Future[None]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self.batches: list[int] = []  # recent batch sizes, for metrics and tests

    async def submit(self, item: T) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, fut))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        await fut

    async def _drain(self) -> None:
        await asyncio.sleep(0)
        while self._waiting:
            batch, self._waiting = self._waiting[: self._max], self._waiting[self._max :]
            live = [(item, fut) for item, fut in batch if not fut.done()]  # skip cancelled
            if not live:
                continue
            self.batches = [*self.batches[-99:], len(live)]
            try:
                outcomes = await self._process([item for item, _ in live])
            except Exception as exc:  # the whole batch failed the same way
                outcomes = [exc] * len(live)
            for (_, fut), outcome in zip(live, outcomes, strict=True):
                if fut.done():
                    continue
                if outcome is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(outcome)


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
        self.batcher: MicroBatcher[MemoryWritten] = MicroBatcher(
            self.process_batch, settings.batch_max
        )

    async def ensure_schema(self) -> None:
        """Best effort at start; retried before the first write if the graph was down."""
        if self._schema_ready:
            return
        try:
            await self.res.graph.ensure_schema()
            self._schema_ready = True
        except Exception as exc:
            log.warning("graph_schema_deferred", error=repr(exc))

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
        """Bus entry point for one event; batched with whatever else is in flight."""
        await self.batcher.submit(event)

    async def on_written_batch(self, events: Sequence[MemoryWritten]) -> None:
        """Entry point for a batch subscriber: fails if any event failed."""
        for outcome in await self.process_batch(list(events)):
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
        for (ev, _), err in zip(ready, await self._write(ready), strict=True):
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
                    await self._retry(lambda row=row: self.res.graph.write_facts(*row))  # type: ignore[misc]
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
            )
            for ev, ex in done
        ]
        await self.res.bus.publish_many(STREAM_EXTRACTED, events)
        for e in events:
            log.info(
                "facts_written",
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
        drainer = self.batcher._drainer
        if drainer is not None and not drainer.done():
            drainer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drainer


def _default_extractor(res: Resources, settings: GraphExtractorSettings) -> Extractor:
    if settings.extractor == res.settings.extractor:
        return res.extractor  # shared with recall in the all-in-one process
    from pcm_common.extract.factory import extractor_from

    return extractor_from(settings)
