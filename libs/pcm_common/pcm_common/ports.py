"""The ports a service's logic uses, as protocols: `Resources` provides them from settings
(real Redis, the configured vector store, the FastStream bus, the litellm embedder), and
`pcm_common.testing` provides in-memory ones, so a service takes what it uses and its
logic runs without servers in unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel
from redis.asyncio import Redis

from pcm_common.stores.vectors import VectorStore


class EventBus(Protocol):
    """Publishing to the streams (`pcm_common.messaging.bus.Bus`, `pcm_common.testing.TestBus`)."""

    async def publish(self, stream: str, event: BaseModel) -> None: ...

    async def publish_many(self, stream: str, events: Sequence[BaseModel]) -> None: ...


class TextEmbedder(Protocol):
    """Dense vectors of memory texts (`pcm_common.models.embeddings.Embedder`)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_one(self, text: str) -> list[float]: ...


class EventPorts(Protocol):
    """What publishing owed events needs (`pcm_common.messaging.outbox.pay`): the outbox lives in
    Redis, the events go on the bus."""

    @property
    def redis(self) -> Redis: ...

    @property
    def bus(self) -> EventBus: ...


class StorePorts(EventPorts, Protocol):
    """What changing stored memories needs (`pcm_common.data.forgetting.Forgetter`)."""

    @property
    def vectors(self) -> VectorStore: ...


class WritePorts(StorePorts, Protocol):
    """What the write path needs: the stores, the bus and the embedder."""

    @property
    def embedder(self) -> TextEmbedder: ...


@dataclass(frozen=True)
class Ports:
    """A plain bundle of the write ports (tests, tools): `Resources` is one too."""

    redis: Redis
    vectors: VectorStore
    bus: EventBus
    embedder: TextEmbedder
