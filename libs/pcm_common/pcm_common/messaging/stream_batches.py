"""Batched consumption of one Redis Streams consumer group (used by `pcm_common.messaging.bus`).

A `BatchConsumer` runs two kinds of loop per group and process:

- ``readers`` readers of new entries (one by default): XREADGROUP ``>`` with COUNT, so one
  call returns up to ``max_batch`` entries; everything that arrived while the previous batch
  was being handled forms the next batch, so batches grow with load and an idle consumer
  adds no latency;
- a claimer of stale entries: XAUTOCLAIM of entries idle longer than ``claim_idle_ms``
  (a killed or stuck replica's), handled the same way.

The handler gets the decoded events of a batch and returns one outcome per event (None:
done, an exception: that event failed). Done entries are acknowledged together (XACK) after
the handler returned, so an acknowledged entry's effect is durable; a failed entry stays
pending for the claimer, and goes to the dead letters after ``max_deliveries`` failures.
Entries still being handled in this process are never handled a second time by its own
claimer (a slow batch would otherwise be claimed and done twice).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

from faststream.redis.parser import BinaryMessageFormatV1
from opentelemetry.trace import Span
from pydantic import BaseModel, ValidationError
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from pcm_common.runtime import tracing
from pcm_common.runtime.heartbeats import Heartbeats
from pcm_common.runtime.request_context import bound_batch
from pcm_common.runtime.telemetry import (
    CALLER,
    EVENT_SECONDS,
    EVENTS_CONSUMED,
    EVENTS_FAILED,
    describe_error,
    get_logger,
)
from pcm_common.stores.redis import keys

E = TypeVar("E", bound=BaseModel)
Outcome = BaseException | None  # None: done; an exception: that event failed
BatchHandler = Callable[[list[E]], Awaitable[Sequence[Outcome]]]
DeadLetterFn = Callable[[str, str, str, dict[str, Any], str, int], Awaitable[None]]

log = get_logger("bus")

_DATA_KEY = b"__data__"  # where FastStream's publisher puts its encoded envelope
_ERROR_BACKOFF_S = 1.0


T = TypeVar("T")


async def each_outcome(
    events: Sequence[T], handle: Callable[[T], Awaitable[None]], concurrency: int
) -> list[Outcome]:
    """`handle` every event of a batch, up to `concurrency` at once, each succeeding or
    failing on its own: one outcome per event, in order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(event: T) -> Outcome:
        async with gate:
            try:
                await handle(event)
            except Exception as exc:
                return exc
            return None

    return list(await asyncio.gather(*(one(ev) for ev in events)))


def decode_entry(fields: dict[bytes, bytes]) -> dict[str, Any]:
    """The JSON body of a stream entry written by `Bus.publish` (FastStream's binary
    envelope) or by any tool as plain fields; a marker dict when it cannot be decoded, so
    the entry is dead-lettered instead of being redelivered for ever."""
    try:
        raw = fields.get(_DATA_KEY)
        if raw is None:
            raw = json.dumps({k.decode(): v.decode() for k, v in fields.items()}).encode()
        body, _headers = BinaryMessageFormatV1.parse(raw)
        decoded = json.loads(body)
    except Exception as exc:
        return {"__undecodable__": repr(exc)[:200]}
    return decoded if isinstance(decoded, dict) else {"__undecodable__": repr(decoded)[:200]}


class BatchConsumer(Generic[E]):
    def __init__(
        self,
        redis: Redis,
        *,
        stream: str,
        group: str,
        consumer: str,
        model: type[E],
        handler: BatchHandler[E],
        dead_letter: DeadLetterFn,
        max_batch: int,
        max_deliveries: int,
        claim_idle_ms: int,
        poll_ms: int = 100,
        claim_poll_ms: int = 1000,
        readers: int = 1,
        heartbeats: Heartbeats | None = None,
        event_spans: bool = True,
    ) -> None:
        self.redis = redis
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.model = model
        self.handler = handler
        self.dead_letter = dead_letter
        self.max_batch = max(1, max_batch)
        self.max_deliveries = max_deliveries
        self.claim_idle_ms = claim_idle_ms
        self.poll_ms = poll_ms
        self.claim_poll_ms = claim_poll_ms
        self.readers = max(1, readers)
        self.heartbeats = heartbeats or Heartbeats(float("inf"))
        self.event_spans = event_spans
        self._claim_name = f"claim:{group}"
        self.failures_key = keys.stream_failures(stream, group)
        self.batches: list[int] = []  # recent batch sizes, for tests and diagnostics
        self._in_flight: set[bytes] = set()
        self._running = False
        self._tasks: list[asyncio.Task[None]] = []

    # ---- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Create the group at the stream start if it is missing (entries written before
        the first consumer ran are still processed), then start both loops."""
        try:
            await self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._running = True
        # Several readers of one group in one process are like that many replicas: Redis
        # hands each new entry to one of them, and a batch waiting on the parse process or
        # the graph server no longer leaves the next batch unread.
        names = [f"read:{self.group}:{i}" for i in range(self.readers)]
        self._tasks = [
            *(asyncio.create_task(self._loop(self._read_fresh, n), name=n) for n in names),
            asyncio.create_task(
                self._loop(self._read_stale, self._claim_name), name=self._claim_name
            ),
        ]

    async def stop(self, timeout_s: float) -> None:
        """Stop reading, let a batch being handled finish (up to `timeout_s`), then cancel:
        entries of an unfinished batch stay pending and are claimed elsewhere."""
        self._running = False
        if not self._tasks:
            return
        _done, late = await asyncio.wait(self._tasks, timeout=timeout_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for task in self._tasks:
            self.heartbeats.forget(task.get_name())  # the task's name is its heartbeat's
        self._tasks = []

    async def _loop(self, read: Callable[[], Awaitable[bool]], name: str) -> None:
        while self._running:
            # Each read returns within its poll (or the claimer's sleep) when idle: a loop
            # silent past the bound is stuck in a handler, or dead.
            self.heartbeats.beat(name)
            try:
                await read()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: keep trying, the entries are safe there
                log.warning(
                    "stream_read_failed", stream=self.stream, group=self.group, error=repr(exc)
                )
                await asyncio.sleep(_ERROR_BACKOFF_S)

    # ---- reading ------------------------------------------------------------------------

    async def _read_fresh(self) -> bool:
        resp = await self.redis.xreadgroup(
            self.group,
            self.consumer,
            {self.stream: ">"},
            count=self.max_batch,
            block=self.poll_ms,
        )
        entries = _entries_of(resp)
        if entries:
            await self.handle(entries)
        return bool(entries)

    async def _read_stale(self) -> bool:
        start: bytes | str = "0-0"
        handled = False
        while self._running:
            try:
                resp = await self.redis.xautoclaim(
                    self.stream,
                    self.group,
                    f"{self.consumer}-claim",
                    min_idle_time=self.claim_idle_ms,
                    start_id=start,
                    count=self.max_batch,
                )
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                break  # stream or group not created yet: nothing to claim
            start, claimed = resp[0], resp[1]
            self.heartbeats.beat(self._claim_name)  # a long backlog is many batches
            # Entries this process is handling right now are its own, just slow.
            entries = [e for e in claimed if e[1] is not None and e[0] not in self._in_flight]
            if entries:
                handled = True
                await self.handle(entries)
            if start in (b"0-0", "0-0"):
                break
        await asyncio.sleep(self.claim_poll_ms / 1000)
        return handled

    # ---- handling -----------------------------------------------------------------------

    async def handle(self, entries: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> None:
        ids = [entry_id for entry_id, _ in entries]
        self._in_flight.update(ids)
        try:
            await self._handle(entries)
        finally:
            self._in_flight.difference_update(ids)

    async def _handle(self, entries: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> None:
        started = time.perf_counter()
        CALLER.set(self.group)  # this consumer's task: its store calls count as the group's
        done: list[bytes] = []
        valid: list[tuple[bytes, dict[str, Any], E]] = []
        for entry_id, fields in entries:
            body = decode_entry(fields)
            try:
                valid.append((entry_id, body, self.model.model_validate(body)))
            except ValidationError as exc:
                # A body that can never parse is dead on arrival: retrying cannot help.
                await self.dead_letter(
                    self.stream, self.group, entry_id.decode(), body, repr(exc), 1
                )
                done.append(entry_id)
        if valid:
            self.batches = [*self.batches[-99:], len(valid)]
            spans = self._spans(valid)
            try:
                with bound_batch([body.get("request_id") for _, body, _ in valid]):
                    outcomes = list(await self.handler([ev for _, _, ev in valid]))
            except Exception as exc:  # the whole batch failed the same way
                outcomes = [exc] * len(valid)
            if len(outcomes) != len(valid):
                err = RuntimeError(f"handler gave {len(outcomes)} outcomes for {len(valid)}")
                outcomes = [err] * len(valid)
            for span, outcome in zip(spans, outcomes, strict=False):
                tracing.end_consumer_span(span, outcome)
            for (entry_id, body, _), outcome in zip(valid, outcomes, strict=True):
                if outcome is None:
                    done.append(entry_id)
                elif await self._failed(entry_id, body, outcome):
                    done.append(entry_id)
            ok = sum(1 for o in outcomes if o is None)
            if ok:
                EVENTS_CONSUMED.labels(self.stream, self.group).inc(ok)
                EVENT_SECONDS.labels(self.stream, self.group).observe(time.perf_counter() - started)
        if done:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xack(self.stream, self.group, *done)
                pipe.hdel(self.failures_key, *done)  # counts of earlier failed deliveries
                await pipe.execute()

    def _spans(self, valid: Sequence[tuple[bytes, dict[str, Any], E]]) -> list[Span]:
        """One consumer span per event of a batch, each a child of the trace its event
        carries (a batch mixes writes); the event then carries its span's context, so the
        events a handler derives from it (`trace=ev.trace`) continue the trace under it."""
        if not (self.event_spans and tracing.enabled()):
            return []
        spans: list[Span] = []
        for entry_id, body, event in valid:
            span = tracing.start_consumer_span(
                self.stream,
                self.group,
                body.get("trace"),
                entry_id=entry_id.decode(),
                tenant=body.get("tenant"),
                memory_id=body.get("memory_id"),
                request_id=body.get("request_id"),
            )
            if hasattr(event, "trace"):
                event.trace = tracing.carrier_of(span)
            spans.append(span)
        return spans

    async def _failed(self, entry_id: bytes, body: dict[str, Any], error: BaseException) -> bool:
        """Count a failure; True when the entry went to the dead letters (acknowledge it),
        False when it stays pending for another delivery."""
        EVENTS_FAILED.labels(self.stream, self.group).inc()
        failures = int(await self.redis.hincrby(self.failures_key, entry_id.decode(), 1))
        log.warning(
            "event_failed",
            stream=self.stream,
            group=self.group,
            entry_id=entry_id.decode(),
            tenant=body.get("tenant"),
            memory_id=body.get("memory_id"),
            request_id=body.get("request_id"),
            failures=failures,
            error=describe_error(error),
        )
        if failures < self.max_deliveries:
            return False
        await self.dead_letter(
            self.stream, self.group, entry_id.decode(), body, repr(error), failures
        )
        return True


def _entries_of(resp: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The entries of a one-stream XREADGROUP reply (RESP2: a list of [stream, entries];
    RESP3: a dict stream -> entries)."""
    if not resp:
        return []
    if isinstance(resp, dict):
        return [e for entries in resp.values() for e in entries]
    return [e for _stream, entries in resp for e in entries]
