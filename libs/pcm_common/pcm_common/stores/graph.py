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


class GraphStore(ABC):
    """Port for the knowledge graph. Every node and relationship carries the tenant."""

    @abstractmethod
    async def ensure_schema(self) -> None:
        """Constraints and indexes (idempotent)."""

    @abstractmethod
    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        """MERGE the memory node, its entities (MENTIONS) and relations; idempotent."""

    @abstractmethod
    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        """Remove the memory's facts and any entity no memory mentions any more."""

    @abstractmethod
    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        """Entities the memory mentions."""

    @abstractmethod
    async def memories_for(
        self, tenant: str, names: Sequence[str], *, limit: int = 50
    ) -> dict[str, float]:
        """Memory ids linked to entities with these names, with a link strength in [0, 1]."""

    @abstractmethod
    async def stats(self, tenant: str) -> dict[str, int]:
        """Counts of memories, entities, MENTIONS and relations for the tenant."""

    @abstractmethod
    async def ping(self) -> bool:
        """True when the server answers."""

    @abstractmethod
    async def close(self) -> None: ...
