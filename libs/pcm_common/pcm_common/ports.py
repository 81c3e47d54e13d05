"""The ports a service's logic uses, as protocols: `Resources` provides them from settings
(real Redis, the configured vector store, the FastStream bus, the litellm embedder), and
`pcm_common.testing` provides in-memory ones, so a service takes what it uses and its
logic runs without servers in unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel
from redis.asyncio import Redis

from pcm_common.stores.vectors import VectorStore

if TYPE_CHECKING:
    from pcm_common.extract import Extractor
    from pcm_common.runtime.heartbeats import Heartbeats
    from pcm_common.stores.graph.port import GraphStore
    from pcm_common.stores.redis.routines import RoutineIndex


class EventBus(Protocol):
    """Publishing to the streams (`pcm_common.messaging.bus.Bus`, `pcm_common.testing.TestBus`)."""

    async def publish(self, stream: str, event: BaseModel) -> None: ...

    async def publish_many(self, stream: str, events: Sequence[BaseModel]) -> None: ...

    async def publish_fresh(self, stream: str, events: Sequence[BaseModel]) -> None: ...


class TextEmbedder(Protocol):
    """Dense vectors of memory texts (`pcm_common.models.embeddings.Embedder`)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_one(self, text: str) -> list[float]: ...


class QueryEmbedder(Protocol):
    """Dense vectors of queries (`Embedder.embed_query`: the default model embeds queries
    with its float graph, memories with the int8 one)."""

    async def embed_query(self, text: str) -> list[float]: ...


class RoutinePorts(Protocol):
    """What reading routines needs: the routine index and the memories it points at."""

    @property
    def vectors(self) -> VectorStore: ...

    @property
    def routines(self) -> RoutineIndex: ...


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


class RecallPorts(RoutinePorts, Protocol):
    """What the read path needs (`pcm_recall.service.RecallService`): the vector store, the
    routine index, the graph for entity links, the query embedder, the bus for the recall
    event, Redis for retrieval feedback; an extractor only where the graph links parse the query
    (`graph_query_ngrams` off)."""

    @property
    def embedder(self) -> QueryEmbedder: ...

    @property
    def graph(self) -> GraphStore: ...

    @property
    def extractor(self) -> Extractor | None: ...

    @property
    def bus(self) -> EventBus: ...

    @property
    def redis(self) -> Redis: ...  # the recall records and feedback terms (`pcm_common.feedback`)


class SweeperPorts(WritePorts, RoutinePorts, Protocol):
    """What the sweeper's consumers and jobs need: the write ports, the routine index, the
    graph (graph repair) and the heartbeats its loops beat."""

    @property
    def graph(self) -> GraphStore: ...

    @property
    def heartbeats(self) -> Heartbeats: ...


@dataclass(frozen=True)
class Ports:
    """A plain bundle of the write ports (tests, tools): `Resources` is one too."""

    redis: Redis
    vectors: VectorStore
    bus: EventBus
    embedder: TextEmbedder
