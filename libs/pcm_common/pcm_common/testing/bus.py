"""`TestBus`: the bus's publishing and subscribing without Redis, for unit tests.

A publish records the event under its stream (`published`) and hands it, as it would come
off the wire (dumped to JSON and read back into each subscriber's model), straight to every
handler registered for that stream: one per consumer group (`consume`, `consume_batch`) and
every listener (`listen`). As with the real bus, a handler's failure is not the publisher's:
it is recorded in `failures`, and the publish succeeds. `fail(stream)` makes publishes to a
stream raise, as a Redis restarting between a store change and its publish does."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from redis.exceptions import ConnectionError as RedisConnectionError

from pcm_common.messaging.stream_batches import BatchHandler

E = TypeVar("E", bound=BaseModel)


@dataclass(frozen=True)
class Failure:
    stream: str
    group: str  # "" for a listener
    body: dict[str, Any]
    error: BaseException


# A handler as the bus keeps it: the event's JSON body in, one outcome per event out.
_Deliver = Callable[[list[dict[str, Any]]], Awaitable[Sequence[BaseException | None]]]


class TestBus:
    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self) -> None:
        self.published: dict[str, list[BaseModel]] = defaultdict(list)
        self.failures: list[Failure] = []
        self._handlers: dict[str, list[tuple[str, _Deliver]]] = defaultdict(list)
        self._failing: set[str] = set()

    # ---- publishing -----------------------------------------------------------------

    async def publish(self, stream: str, event: BaseModel) -> None:
        await self.publish_many(stream, [event])

    async def publish_many(self, stream: str, events: Sequence[BaseModel]) -> None:
        if not events:
            return
        if stream in self._failing:
            raise RedisConnectionError(f"publishing to {stream} fails (TestBus.fail)")
        self.published[stream].extend(events)
        bodies = [e.model_dump(mode="json") for e in events]
        for group, deliver in list(self._handlers[stream]):
            for body, outcome in zip(bodies, await deliver(bodies), strict=True):
                if outcome is not None:
                    self.failures.append(Failure(stream, group, body, outcome))

    async def publish_fresh(self, stream: str, events: Sequence[BaseModel]) -> None:
        await self.publish_many(stream, events)

    def fail(self, *streams: str) -> None:
        """Publishes to `streams` raise from now on (none: they succeed again)."""
        self._failing = set(streams)

    def events(self, stream: str, model: type[E]) -> list[E]:
        """The events published to `stream`, as `model`."""
        return [model.model_validate(e.model_dump(mode="json")) for e in self.published[stream]]

    # ---- subscribing ----------------------------------------------------------------

    def consume(
        self,
        stream: str,
        group: str,
        model: type[E],
        handler: Callable[[E], Awaitable[None]],
        concurrency: int | None = None,
    ) -> None:
        async def each(events: list[E]) -> list[BaseException | None]:
            out: list[BaseException | None] = []
            for event in events:
                try:
                    await handler(event)
                    out.append(None)
                except Exception as exc:
                    out.append(exc)
            return out

        self.consume_batch(stream, group, model, each)

    def consume_batch(
        self,
        stream: str,
        group: str,
        model: type[E],
        handler: BatchHandler[E],
        max_batch: int = 64,
        readers: int = 1,
    ) -> None:
        async def deliver(bodies: list[dict[str, Any]]) -> Sequence[BaseException | None]:
            outcomes: list[BaseException | None] = []
            for start in range(0, len(bodies), max(1, max_batch)):
                chunk = bodies[start : start + max(1, max_batch)]
                try:
                    outcomes += await handler([model.model_validate(b) for b in chunk])
                except Exception as exc:  # the whole batch failed
                    outcomes += [exc] * len(chunk)
            return outcomes

        self._handlers[stream].append((group, deliver))

    def listen(self, stream: str, model: type[E], handler: Callable[[E], Awaitable[None]]) -> None:
        self.consume(stream, "", model, handler)

    # ---- lifecycle (nothing to connect) ---------------------------------------------

    async def connect(self) -> None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
