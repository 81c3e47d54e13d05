"""`MemoryGraphStore`: the graph port in dicts, for unit tests.

Per tenant: each memory's entities (MENTIONS) and relations, as its last `write_facts` set
them; an entity is keyed case- and space-insensitively (`Entity.key`) and keeps the surface
form and type it was first written with, and exists while a memory mentions it. A relation
exists while a memory asserts it. `memories_for` and `entity_links` answer as the Neo4j
adapter's queries do (`stores.neo4j_graph`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pcm_common.stores.graph import Entity, EntityLinks, Extraction, GraphStore, Relation


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


@dataclass
class _Tenant:
    mentions: dict[str, set[str]] = field(default_factory=dict)  # memory -> entity keys
    relations: dict[str, set[tuple[str, str, str]]] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)  # key -> first seen

    def mentioning(self, key: str) -> list[str]:
        return sorted(m for m, keys in self.mentions.items() if key in keys)

    def prune(self) -> None:
        """Entities no memory mentions any more are gone."""
        used = set().union(*self.mentions.values()) if self.mentions else set()
        for key in [k for k in self.entities if k not in used]:
            del self.entities[key]


class MemoryGraphStore(GraphStore):
    def __init__(self) -> None:
        self._tenants: dict[str, _Tenant] = defaultdict(_Tenant)

    async def ensure_schema(self) -> None:
        return None

    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        t = self._tenants[tenant]
        for e in extraction.entities + [
            x for r in extraction.relations for x in (r.source, r.target)
        ]:
            t.entities.setdefault(e.key, Entity(" ".join(e.name.split()), e.type))
        t.mentions[memory_id] = {e.key for e in extraction.entities} | {
            x.key for r in extraction.relations for x in (r.source, r.target)
        }
        t.relations[memory_id] = {_sig(r) for r in extraction.relations}
        t.prune()

    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        t = self._tenants[tenant]
        t.mentions.pop(memory_id, None)
        t.relations.pop(memory_id, None)
        t.prune()

    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        t = self._tenants[tenant]
        return [t.entities[k] for k in sorted(t.mentions.get(memory_id, ()))]

    async def memories_for(
        self, tenant: str, names: Sequence[str], *, limit: int = 50
    ) -> dict[str, float]:
        """Strength: the share of the names' known entities the memory mentions."""
        t = self._tenants[tenant]
        keys = {k for k in map(_key, names) if k in t.entities}
        if not keys or limit <= 0:
            return {}
        hits = {m: len(mine & keys) for m, mine in t.mentions.items() if mine & keys}
        ranked = sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return {m: min(1.0, n / len(keys)) for m, n in ranked}

    async def entity_links(
        self,
        tenant: str,
        names: Sequence[str],
        *,
        max_df: int,
        types: Sequence[str] = (),
        typed_max_df: int = 0,
    ) -> list[EntityLinks]:
        t = self._tenants[tenant]
        keys = sorted({k for k in map(_key, names) if k})
        out = []
        for key in (k for k in keys if k in t.entities):
            mids = t.mentioning(key)
            walk = mids if len(mids) <= max_df else []
            co = {
                (m, t.entities[o].type, o)
                for m in walk
                for o in t.mentions[m]
                if o in keys and o != key
            }
            typed = [
                m
                for m in (mids if types and len(mids) <= typed_max_df else [])
                if any(t.entities[x].type in types and x != key for x in t.mentions[m])
            ]
            out.append(
                EntityLinks(
                    key=key,
                    type=t.entities[key].type,
                    df=len(mids),
                    memory_ids=tuple(walk),
                    typed=tuple(typed),
                    co=tuple(sorted(co)),
                )
            )
        return out

    async def memory_ids(
        self, tenant: str, *, after: str | None = None, limit: int = 1000
    ) -> list[str]:
        mids = sorted(self._tenants[tenant].mentions)
        return [m for m in mids if m > (after or "")][:limit]

    async def existing_memories(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        return set(memory_ids) & set(self._tenants[tenant].mentions)

    async def stats(self, tenant: str) -> dict[str, int]:
        t = self._tenants[tenant]
        return {
            "memories": len(t.mentions),
            "entities": len(t.entities),
            "mentions": sum(len(keys) for keys in t.mentions.values()),
            "relations": len(set().union(*t.relations.values()) if t.relations else set()),
        }

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        return None


def _sig(r: Relation) -> tuple[str, str, str]:
    return (r.source.key, r.type, r.target.key)
