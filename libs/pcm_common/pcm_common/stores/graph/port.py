"""Graph store port: entities and relations per tenant (DESIGN §1, whitepaper §2.6)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Entity:
    name: str  # surface form as first seen
    type: str  # one of the closed entity types (Person, Organization, Place, ...)

    @property
    def key(self) -> str:
        """Canonical name used for uniqueness: case- and space-insensitive."""
        return " ".join(self.name.split()).casefold()


@dataclass(frozen=True)
class Relation:
    source: Entity
    type: str  # relation family (KNOWS, WORKS_AT, USES, ...)
    target: Entity


@dataclass
class Extraction:
    entities: list[Entity]
    relations: list[Relation]


@dataclass(frozen=True)
class EntityLinks:
    """One query entity found in the graph: how many memories mention it (``df``) and,
    when it is rare enough to be useful (``df`` within the caller's cap), which ones."""

    key: str
    type: str
    df: int
    memory_ids: tuple[str, ...]
    # Asked with entity types: memories that mention this entity and one of those types
    # (any df up to the caller's typed cap; the caller caps their number itself).
    typed: tuple[str, ...] = ()
    # When ``memory_ids`` are given: the other asked entities those memories mention, as
    # (memory id, type, key), so the caller can weigh a memory by every query entity it
    # names without asking again.
    co: tuple[tuple[str, str, str], ...] = ()


class GraphStore(ABC):
    """Port for the knowledge graph. Every node and relationship carries the tenant."""

    @abstractmethod
    async def ensure_schema(self) -> None:
        """Constraints and indexes (idempotent)."""

    @abstractmethod
    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        """MERGE the memory node, its entities (MENTIONS) and relations; idempotent."""

    async def write_facts_many(self, items: Sequence[tuple[str, str, Extraction]]) -> None:
        """Batch form of ``write_facts`` over (tenant, memory_id, extraction) items; same
        result as writing them one by one (a later item for the same memory wins).
        Adapters override this with set-based writes."""
        for tenant, memory_id, extraction in items:
            await self.write_facts(tenant, memory_id, extraction)

    @abstractmethod
    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        """Remove the memory's facts and any entity no memory mentions any more."""

    @abstractmethod
    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        """Entities the memory mentions."""

    async def relations_of(self, tenant: str, memory_id: str, *, limit: int = 50) -> list[Relation]:
        """Typed relations from the entities this memory mentions (the inspector's graph
        view). Adapters without relations answer none."""
        return []

    @abstractmethod
    async def memories_for(
        self, tenant: str, names: Sequence[str], *, limit: int = 50
    ) -> dict[str, float]:
        """Memory ids linked to entities with these names, with a link strength in [0, 1]."""

    @abstractmethod
    async def neighbours(
        self, tenant: str, memory_id: str, *, limit: int = 15
    ) -> dict[str, list[str]]:
        """The other memories that mention an entity this memory mentions (the inspector's
        graph view): memory id -> the keys of those entities (sorted, once each), the
        memories sharing the most entities first, at most ``limit``; among memories sharing
        as many, the store's order decides which come."""

    @abstractmethod
    async def entity_links(
        self,
        tenant: str,
        names: Sequence[str],
        *,
        max_df: int,
        types: Sequence[str] = (),
        typed_max_df: int = 0,
    ) -> list[EntityLinks]:
        """Recall's one round trip: the named entities found in the tenant's graph.

        Entities mentioned by more than ``max_df`` memories come back with their ``df``
        but without memory ids (too broad to link; the caller still weighs them) and
        without ``co``. With ``types``, each entity mentioned by at most ``typed_max_df``
        memories also lists, in ``typed``, those of its memories that mention an entity of
        one of the types."""

    @abstractmethod
    async def memory_ids(
        self, tenant: str, *, after: str | None = None, limit: int = 1000
    ) -> list[str]:
        """The tenant's memory ids in the graph, ascending, those > ``after`` (paging)."""

    @abstractmethod
    async def existing_memories(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memories have a node in the graph (i.e. were extracted)."""

    async def delete_memories(self, tenant: str, memory_ids: Sequence[str]) -> int:
        """Batch form of ``delete_memory``; returns how many memory nodes existed."""
        present = await self.existing_memories(tenant, memory_ids)
        for mid in sorted(present):
            await self.delete_memory(tenant, mid)
        return len(present)

    @abstractmethod
    async def stats(self, tenant: str) -> dict[str, int]:
        """Counts of memories, entities, MENTIONS and relations for the tenant."""

    @abstractmethod
    async def ping(self) -> bool:
        """True when the server answers."""

    @abstractmethod
    async def close(self) -> None: ...
