"""Redis Streams: publishing through FastStream, reliable consumer groups, pipeline status.

Delivery is at-least-once. Consumers read entries in batches
(`pcm_common.messaging.stream_batches`); an entry is acknowledged only after its handler's
effect is durable; a failure leaves the entry pending, and a claimer per group takes
entries idle longer than `claim_idle_ms` (XAUTOCLAIM), so a killed replica loses nothing.
After `max_deliveries` failures the entry goes to `pcm.dlq` with its error. Handlers must
therefore be idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from faststream.redis import RedisBroker, RedisClusterBroker, StreamSub
from pydantic import BaseModel
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pcm_common.messaging.backlog import group_backlogs, parse_id, pipeline_status
from pcm_common.messaging.events import PIPELINE_GROUPS, STREAM_DLQ, DeadLetter
from pcm_common.messaging.stream_batches import BatchConsumer, BatchHandler, Outcome, each_outcome
from pcm_common.runtime import tracing
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.heartbeats import Heartbeats
from pcm_common.runtime.request_context import bound_request
from pcm_common.runtime.telemetry import EVENTS_DEAD, get_logger
from pcm_common.stores.redis.connect import cluster_url, open_redis

E = TypeVar("E", bound=BaseModel)
Handler = Callable[[E], Awaitable[None]]

log = get_logger("bus")

# Where callers have always found them.
__all__ = ["Bus", "group_backlogs", "pipeline_status", "trim_dead_letters", "trim_processed"]

# How long stopping waits for handlers in progress before cancelling them.
GRACEFUL_TIMEOUT_S = 15.0


def default_consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Bus:
    """One per process: a FastStream broker plus a plain client for stream administration."""

    def __init__(self, settings: PcmSettings, heartbeats: Heartbeats | None = None) -> None:
        self.settings = settings
        self.heartbeats = heartbeats or Heartbeats(settings.stall_after_s)
        self.consumer = settings.consumer_name or default_consumer_name()
        # Per-message broker logs at DEBUG: our handlers log each event with tenant and ids.
        url, self.cluster = cluster_url(settings.redis_url, settings.redis_cluster)
        # On a Redis Cluster each stream is one key, on the node of its slot; FastStream's
        # cluster broker publishes each event on its own (it takes no pipeline).
        broker_type = RedisClusterBroker if self.cluster else RedisBroker
        self.broker = broker_type(url, graceful_timeout=GRACEFUL_TIMEOUT_S, log_level=logging.DEBUG)
        self.redis: Redis = open_redis(url, self.cluster)
        self._connected = False
        self._consumers: list[BatchConsumer[Any]] = []

    async def connect(self) -> None:
        if not self._connected:
            await self.broker.connect()
            self._connected = True

    async def start(self) -> None:
        """Create every pipeline group from the stream start, then start subscribers."""
        await ensure_groups(self.redis)
        await self.connect()
        await self.broker.start()
        for consumer in self._consumers:
            await consumer.start()

    async def stop(self) -> None:
        # Consumers stop reading, then wait for the batch in hand (graceful timeout);
        # unfinished entries stay pending and are claimed elsewhere.
        await asyncio.gather(*(c.stop(GRACEFUL_TIMEOUT_S) for c in self._consumers))
        await self.broker.stop()
        await self.redis.aclose()
        self._connected = False

    async def publish(self, stream: str, event: BaseModel) -> None:
        await self.connect()
        await self.broker.publish(
            event.model_dump(mode="json"), stream=stream, maxlen=self.settings.stream_maxlen
        )

    async def publish_many(self, stream: str, events: Sequence[BaseModel]) -> None:
        """One round trip for the whole list: each event is still encoded by the broker
        (same envelope and ids as `publish`), but the XADDs are queued on a pipeline and
        sent together, in order (docs/decisions/0045-redis-round-trips-per-batch.md)."""
        if not events:
            return
        await self._publish_on(self.redis, stream, events)

    async def publish_fresh(self, stream: str, events: Sequence[BaseModel]) -> None:
        """`publish_many`, tried once more on a new connection when the first try fails
        to reach Redis: a pooled connection a restarted Redis closed fails on first use."""
        try:
            await self.publish_many(stream, events)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            log.warning("publish_retried", stream=stream, error=repr(exc)[:200])
            fresh = open_redis(self.settings.redis_url, self.cluster)
            try:
                await self._publish_on(fresh, stream, events)
            finally:
                await fresh.aclose()

    async def queue_publish(self, pipe: Pipeline, stream: str, body: dict[str, Any]) -> Any:
        """Queue one event, already a JSON object, on `pipe` in the envelope `publish`
        writes: for a transaction that publishes together with another change (a dead
        letter sent back to its stream is removed from `pcm.dlq` in the same MULTI).
        Returns None when queued. On a Redis Cluster two streams are two slots, which one
        MULTI cannot span: the event is published at once and its entry id returned, and
        the transaction holds only the other change (docs/cluster.md)."""
        await self.connect()
        if self.cluster:
            return await self.broker.publish(
                body, stream=stream, maxlen=self.settings.stream_maxlen
            )
        await self.broker.publish(
            body, stream=stream, maxlen=self.settings.stream_maxlen, pipeline=pipe
        )
        return None

    async def _publish_on(self, client: Redis, stream: str, events: Sequence[BaseModel]) -> None:
        await self.connect()
        if self.cluster:
            # FastStream's cluster broker ignores a pipeline: one XADD at a time, in order.
            for event in events:
                await self.broker.publish(
                    event.model_dump(mode="json"),
                    stream=stream,
                    maxlen=self.settings.stream_maxlen,
                )
            return
        async with client.pipeline(transaction=False) as pipe:
            for event in events:
                await self.broker.publish(
                    event.model_dump(mode="json"),
                    stream=stream,
                    maxlen=self.settings.stream_maxlen,
                    pipeline=pipe,
                )
            await pipe.execute()

    def consume(
        self,
        stream: str,
        group: str,
        model: type[E],
        handler: Handler[E],
        concurrency: int | None = None,
    ) -> None:
        """Register a per-event `handler` for `group`: the entries of each read are handled
        up to `concurrency` at once, each succeeding or failing on its own."""
        workers = max(1, concurrency or self.settings.consumer_concurrency)

        async def traced(event: E) -> None:
            # Each event's lines carry the id of the request that published it, and its
            # span continues that request's trace (events it publishes continue it too).
            request_id = getattr(event, "request_id", None)
            with (
                bound_request(request_id),
                tracing.consumer_span(
                    stream,
                    group,
                    getattr(event, "trace", None),
                    tenant=getattr(event, "tenant", None),
                    memory_id=getattr(event, "memory_id", None),
                    request_id=request_id,
                ),
            ):
                await handler(event)

        async def each(events: list[E]) -> list[Outcome]:
            return await each_outcome(events, traced, workers)

        # Each event's span is made by `traced`, not by the batch consumer.
        self.consume_batch(
            stream, group, model, each, max_batch=max(16, 2 * workers), event_spans=False
        )

    def consume_batch(
        self,
        stream: str,
        group: str,
        model: type[E],
        handler: BatchHandler[E],
        max_batch: int = 64,
        readers: int = 1,
        event_spans: bool = True,
    ) -> None:
        """Register a batch `handler` for `group`: it gets up to `max_batch` events read
        together and returns one outcome per event (None, or the exception it failed with).
        `readers` readers of new entries (batches handled concurrently, as by that many
        replicas) and one claimer of stale ones (`BatchConsumer`)."""
        self._consumers.append(
            BatchConsumer(
                self.redis,
                stream=stream,
                group=group,
                consumer=self.consumer,
                model=model,
                handler=handler,
                dead_letter=self._dead_letter,
                max_batch=max_batch,
                max_deliveries=self.settings.max_deliveries,
                claim_idle_ms=self.settings.claim_idle_ms,
                readers=readers,
                heartbeats=self.heartbeats,
                event_spans=event_spans,
            )
        )

    def listen(self, stream: str, model: type[E], handler: Handler[E]) -> None:
        """Fan-out without a group (every replica sees every new entry): cache invalidation."""

        async def run(body: dict[str, Any]) -> None:
            try:
                await handler(model.model_validate(body))
            except Exception as exc:  # a cache drop must never wedge the reader
                log.warning("listen_failed", stream=stream, error=repr(exc))

        self.broker.subscriber(stream=StreamSub(stream, polling_interval=200))(run)

    async def _dead_letter(
        self, stream: str, group: str, entry_id: str, body: dict[str, Any], error: str, n: int
    ) -> None:
        letter = DeadLetter(
            stream=stream, group=group, entry_id=entry_id, error=error, deliveries=n, body=body
        )
        # Plain JSON fields, not the broker's envelope: operators read this stream with any tool.
        await self.redis.xadd(
            STREAM_DLQ, {"data": letter.model_dump_json()}, maxlen=self.settings.stream_maxlen
        )
        EVENTS_DEAD.labels(stream, group).inc()
        log.error(
            "event_dead_lettered",
            stream=stream,
            group=group,
            entry_id=entry_id,
            tenant=body.get("tenant"),
            memory_id=body.get("memory_id"),
            request_id=body.get("request_id"),
            error=error,
        )


async def ensure_groups(redis: Redis) -> None:
    """Create every pipeline consumer group at the stream start (id 0), so entries written
    before a consumer first ran are still processed."""
    for stream, groups in PIPELINE_GROUPS.items():
        for group in groups:
            try:
                await redis.xgroup_create(stream, group, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise


async def trim_processed(
    redis: Redis, groups_of: Mapping[str, Sequence[str]] | None = None
) -> dict[str, int]:
    """Drop the entries every consumer group of a stream has processed (read and
    acknowledged); returns how many were dropped per stream. Events carry memory texts, so
    without this a deleted or expired memory's text would stay in the streams until
    `stream_maxlen` pushed it out. Kept: anything a group has not read, anything pending
    (a crashed replica's entries, claimed later), and every entry of a stream one of whose
    groups does not exist yet (it will read from the start). Safe with replicas: the trim
    point only moves forward, and XTRIM MINID never removes an entry at or after it."""
    out: dict[str, int] = {}
    for stream, wanted in (groups_of or PIPELINE_GROUPS).items():
        try:
            infos = {_s(i["name"]): i for i in await redis.xinfo_groups(stream)}
        except ResponseError:
            continue  # no stream yet
        if any(g not in infos for g in wanted):
            continue
        point: tuple[int, int] | None = None
        for group in wanted:
            info = infos[group]
            at = parse_id(info["last-delivered-id"])
            if int(info.get("pending") or 0):
                summary = await redis.xpending(stream, group)
                if summary.get("min"):
                    at = min(at, parse_id(summary["min"]))
            point = at if point is None else min(point, at)
        if point is None or point == (0, 0):
            continue
        dropped = await redis.xtrim(stream, minid=f"{point[0]}-{point[1]}", approximate=False)
        if dropped:
            out[stream] = int(dropped)
    return out


async def trim_dead_letters(redis: Redis, keep_days: float, now_s: float | None = None) -> int:
    """Drop dead letters older than `keep_days` (entry ids are their times): they carry
    the failed events, texts included, and are kept for an operator to look at, not for
    ever. Returns how many went."""
    if keep_days <= 0:
        return 0
    cut_ms = int(((time.time() if now_s is None else now_s) - keep_days * 86_400) * 1000)
    if cut_ms <= 0:
        return 0
    return int(await redis.xtrim(STREAM_DLQ, minid=f"{cut_ms}-0", approximate=False))


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)
