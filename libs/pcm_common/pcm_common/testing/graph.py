"""`MemoryGraphStore`: the graph port in dicts, for unit tests.

Per tenant, as the Neo4j adapter keeps it (`stores.graph.neo4j`): an entity is its (type,
key) pair, the key case- and space-insensitive (`Entity.key`), with the surface form it was
first written with; a memory mentions the entities its last `write_facts` named, relation
endpoints included; an entity exists while a memory mentions it, a relation while a memory
asserts it. Types are checked against the closed sets. `memories_for`, `neighbours` and
`entity_links` answer as the adapter's queries do."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pcm_common.stores.graph.port import Entity, EntityLinks, Extraction, GraphStore
from pcm_common.stores.graph.schema import require_entity_type, require_relation_type

Node = tuple[str, str]  # (type, key)


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


@dataclass
class _Tenant:
    mentions: dict[str, set[Node]] = field(default_factory=dict)  # memory -> entities
    relations: dict[str, set[tuple[str, Node, Node]]] = field(default_factory=dict)
    surface: dict[Node, str] = field(default_factory=dict)  # entity -> first surface form

    def nodes(self, keys: set[str]) -> list[Node]:
        return sorted(n for n in self.surface if n[1] in keys)

    def mentioning(self, node: Node) -> list[str]:
        return sorted(m for m, nodes in self.mentions.items() if node in nodes)

    def prune(self) -> None:
        """Entities no memory mentions any more are gone."""
        used = set().union(*self.mentions.values()) if self.mentions else set()
        for node in [n for n in self.surface if n not in used]:
            del self.surface[node]


class MemoryGraphStore(GraphStore):
    def __init__(self) -> None:
        self._tenants: dict[str, _Tenant] = defaultdict(_Tenant)

    async def ensure_schema(self) -> None:
        return None

    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        t = self._tenants[tenant]
        nodes: set[Node] = set()

        def add(e: Entity) -> Node | None:
            surface = " ".join(e.name.split())
            if not surface:
                return None
            node = (require_entity_type(e.type), _key(surface))
            t.surface.setdefault(node, surface)
            nodes.add(node)
            return node

        for e in extraction.entities:
            add(e)
        relations = set()
        for r in extraction.relations:
            kind = require_relation_type(r.type)
            src, dst = add(r.source), add(r.target)
            if src is not None and dst is not None:
                relations.add((kind, src, dst))
        t.mentions[memory_id], t.relations[memory_id] = nodes, relations
        t.prune()

    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        t = self._tenants[tenant]
        t.mentions.pop(memory_id, None)
        t.relations.pop(memory_id, None)
        t.prune()

    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        t = self._tenants[tenant]
        return [Entity(t.surface[n], n[0]) for n in sorted(t.mentions.get(memory_id, ()))]

    async def memories_for(
        self, tenant: str, names: Sequence[str], *, limit: int = 50
    ) -> dict[str, float]:
        """Strength: the share of the names' known entity keys the memory mentions."""
        t = self._tenants[tenant]
        known = {n[1] for n in t.nodes({_key(n) for n in names})}
        if not known or limit <= 0:
            return {}
        hits = {m: len({n[1] for n in nodes} & known) for m, nodes in t.mentions.items()}
        ranked = sorted(((m, h) for m, h in hits.items() if h), key=lambda mh: (-mh[1], mh[0]))
        return {m: min(1.0, h / len(known)) for m, h in ranked[:limit]}

    async def neighbours(
        self, tenant: str, memory_id: str, *, limit: int = 15
    ) -> dict[str, list[str]]:
        """Ties by memory id (the adapter's: the store's order)."""
        t = self._tenants[tenant]
        own = t.mentions.get(memory_id, set())
        shared = {m: nodes & own for m, nodes in t.mentions.items() if m != memory_id}
        ranked = sorted((m for m in shared if shared[m]), key=lambda m: (-len(shared[m]), m))
        return {m: sorted({n[1] for n in shared[m]}) for m in ranked[: max(limit, 0)]}

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
        keys = {k for k in map(_key, names) if k}
        out = []
        for node in t.nodes(keys):
            mids = t.mentioning(node)
            walk = mids if len(mids) <= max_df else []
            co = {
                (m, o[0], o[1]) for m in walk for o in t.mentions[m] if o[1] in keys and o != node
            }
            typed = [
                m
                for m in (mids if types and len(mids) <= typed_max_df else [])
                if any(x[0] in types and x[1] != node[1] for x in t.mentions[m])
            ]
            out.append(
                EntityLinks(
                    key=node[1],
                    type=node[0],
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
            "entities": len(t.surface),
            "mentions": sum(len(nodes) for nodes in t.mentions.values()),
            "relations": len(set().union(*t.relations.values()) if t.relations else set()),
        }

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        return None
