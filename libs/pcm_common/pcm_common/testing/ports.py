"""`MemoryPorts`: every port a service takes (`pcm_common.ports`), made of the in-memory
doubles, for unit tests of service logic without servers. Redis is the caller's (a
`fakeredis` client in PCM's tests): the routine index, locks, outboxes and markers live in
it as in production."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from redis.asyncio import Redis

from pcm_common.extract import Extractor
from pcm_common.runtime.heartbeats import Heartbeats
from pcm_common.stores.redis.routines import RoutineIndex
from pcm_common.testing.bus import TestBus
from pcm_common.testing.embedder import HashEmbedder
from pcm_common.testing.graph import MemoryGraphStore
from pcm_common.testing.vectors import MemoryVectorStore


@dataclass
class MemoryPorts:
    """The write, read and sweeper ports at once (`WritePorts`, `RecallPorts`,
    `SweeperPorts`), so that one world can be written, swept and recalled."""

    redis: Redis
    vectors: MemoryVectorStore = field(default_factory=MemoryVectorStore)
    bus: TestBus = field(default_factory=TestBus)
    embedder: HashEmbedder = field(default_factory=HashEmbedder)
    graph: MemoryGraphStore = field(default_factory=MemoryGraphStore)
    heartbeats: Heartbeats = field(default_factory=lambda: Heartbeats(600.0))
    # Recall needs one only where its graph links parse the query (n-grams are the default).
    extractor: Extractor | None = None

    @cached_property
    def routines(self) -> RoutineIndex:
        return RoutineIndex(self.redis)


if TYPE_CHECKING:
    from pcm_common.ports import RecallPorts, SweeperPorts, WritePorts

    def _is_every_port(ports: MemoryPorts) -> tuple[WritePorts, RecallPorts, SweeperPorts]:
        return ports, ports, ports  # mypy checks that the bundle fits each protocol
