"""Writing a batch of extractions to the graph: each extraction validated against the
closed sets and normalized into rows, then one transaction per tenant that makes every
memory's facts equal to its extraction (merges, then prunes of what it no longer states).
Also the ArcadeDB MERGE race retry and the canonical entity key."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple

from neo4j import AsyncManagedTransaction

from pcm_common.stores.graph.neo4j import queries as q
from pcm_common.stores.graph.port import Entity, Extraction
from pcm_common.stores.graph.schema import ENTITY_LABEL, require_entity_type, require_relation_type

# ArcadeDB's MERGE is not atomic against a concurrent MERGE of the same new node: the
# loser fails with ConstraintValidationFailed (a client error the driver does not retry).
# Re-running the whole write then finds the node and succeeds. Neo4j locks the unique
# index entry instead, so there this never fires.
CONSTRAINT_RETRIES = 5


def surface_and_key(name: str) -> tuple[str, str]:
    """The name with its whitespace collapsed, and its `canonical_key` (one split for
    both: the graph write needs the two for every entity)."""
    surface = " ".join(name.split())
    return surface, surface.casefold()


def canonical_key(name: str) -> str:
    """Same canonical form as ``Entity.key`` (case- and whitespace-insensitive)."""
    return surface_and_key(name)[1]


def _relation_sig(rel_type: str, st: str, sk: str, tt: str, tk: str) -> str:
    # Must match the string the prune query builds from the stored relationship.
    return f"{rel_type}|{st}|{sk}|{tt}|{tk}"


Normalized = tuple[dict[tuple[str, str], str], dict[str, list[dict[str, str]]]]


class _Rows(NamedTuple):
    """A batch's parameters, sorted: concurrent batches lock shared entities and relations
    in the same order, which keeps Neo4j deadlocks (retried, but slow) rare."""

    mids: list[str]
    order: list[tuple[str, str]]  # entity (type, key)s
    entities: list[list[str]]  # [type, key, name] in `order`
    indexed: list[list[Any]]  # [memory id, [entity positions]]: lists pack smaller than maps
    rels: dict[str, list[dict[str, Any]]]  # relation type -> rows with their memory ids


def _rows(memories: dict[str, Normalized]) -> _Rows:
    entity_rows: dict[tuple[str, str], list[str]] = {}
    rel_mids: dict[str, dict[tuple[str, str, str, str], list[str]]] = defaultdict(dict)
    mids = sorted(memories)
    for mid in mids:
        entities, relations = memories[mid]
        for (t, k), name in entities.items():
            entity_rows.setdefault((t, k), [t, k, name])
        for rt, rows in relations.items():
            for row in rows:
                sig = (row["st"], row["sk"], row["tt"], row["tk"])
                rel_mids[rt].setdefault(sig, []).append(mid)
    order = sorted(entity_rows)
    position = {key: i for i, key in enumerate(order)}
    return _Rows(
        mids=mids,
        order=order,
        entities=[entity_rows[key] for key in order],
        indexed=[[mid, [position[e] for e in memories[mid][0]]] for mid in mids],
        rels={
            rt: [
                {"st": st, "sk": sk, "tt": tt, "tk": tk, "mids": ms}
                for (st, sk, tt, tk), ms in sorted(rows.items())
            ]
            for rt, rows in rel_mids.items()
        },
    )


def batch_work(tenant: str, memories: dict[str, Normalized], now: int) -> Any:
    """Transaction function writing ``memories`` ({memory_id: normalized facts}) as the
    complete fact set of each memory."""
    rows = _rows(memories)

    async def work(tx: AsyncManagedTransaction) -> None:
        old = await _write_nodes(tx, tenant, memories, rows)
        if old:
            # Only facts outside the keep lists are withdrawn, so pruning after the merges
            # above leaves what it would have left before them.
            await prune(
                tx,
                tenant,
                [_prune_item(mid, memories[mid]) for mid in old],
                [f"{t}|{k}" for (t, k) in rows.order],
            )
        for rel_type in sorted(rows.rels):
            query = q.MERGE_RELATIONS.format(entity=ENTITY_LABEL, rel=rel_type)
            await _run(tx, query, tenant=tenant, rels=rows.rels[rel_type], now=now)

    return work


async def _write_nodes(
    tx: AsyncManagedTransaction, tenant: str, memories: dict[str, Normalized], rows: _Rows
) -> list[str]:
    """The batch's entities and memory mentions merged; the ids of its memories that were
    in the graph already (sorted), whose facts are then pruned to the new ones."""
    mids = rows.mids
    written = []
    if rows.entities:
        written = await fetch(
            tx,
            q.WRITE_NODES,
            tenant=tenant,
            mids=mids,
            entities=rows.entities,
            mems=rows.indexed,
        )
    # Aligned, the count is at least one: every entity row comes from some memory.
    if written and int(written[0]["n"]) > 0:
        return sorted(str(m) for m in written[0]["old"])
    # No entities, or collect() reordered rows: the same writes as keyed rows.
    existing = await fetch(tx, q.EXISTING, tenant=tenant, mids=mids)
    old = sorted(str(r["id"]) for r in existing)
    if rows.entities:
        await _run(tx, q.MERGE_ENTITIES, tenant=tenant, entities=rows.entities)
    keyed = [{"mid": mid, "ents": [list(e) for e in memories[mid][0]]} for mid in mids]
    await _run(tx, q.MERGE_MEMORY_MENTIONS, tenant=tenant, mems=keyed)
    return old


def _prune_item(mid: str, facts: Normalized) -> dict[str, Any]:
    """A memory's keep lists for ``_prune``: its relation signatures and "type|key"s."""
    entities, relations = facts
    return {
        "mid": mid,
        "keep": [
            _relation_sig(rt, row["st"], row["sk"], row["tt"], row["tk"])
            for rt, rows in relations.items()
            for row in rows
        ],
        "keep_entities": [f"{t}|{k}" for (t, k) in entities],
    }


async def prune(
    tx: AsyncManagedTransaction,
    tenant: str,
    items: list[dict[str, Any]],
    still_used: list[str],
) -> None:
    """Withdraw each memory from the facts not in its keep lists and delete entities no
    memory mentions any more (``still_used``: entities the batch is about to mention).

    ``items``: {mid, keep: relation signatures, keep_entities: "type|key"}.
    """
    await _run(tx, q.PRUNE_RELATIONS, tenant=tenant, items=items)
    mention_items = [{"mid": it["mid"], "keep": it.get("keep_entities", [])} for it in items]
    result = await tx.run(q.PRUNE_MENTIONS, tenant=tenant, items=mention_items)
    used = set(still_used)
    cands = {
        (r["type"], r["key"]): {"type": r["type"], "key": r["key"]}
        async for r in result
        if f"{r['type']}|{r['key']}" not in used
    }
    if cands:
        await _run(tx, q.DELETE_ORPHANS, tenant=tenant, cands=[cands[k] for k in sorted(cands)])


async def _run(tx: AsyncManagedTransaction, query: str, **params: Any) -> None:
    result = await tx.run(query, **params)
    await result.consume()


async def fetch(tx: AsyncManagedTransaction, query: str, **params: Any) -> list[dict[str, Any]]:
    result = await tx.run(query, **params)
    return [record.data() async for record in result]


def normalize(extraction: Extraction) -> Normalized:
    """Validate against the closed sets and de-duplicate.

    Returns entities {(type, key): first surface name} (relation endpoints included,
    so the memory mentions every entity it relates) and relation rows by family.
    """
    entities: dict[tuple[str, str], str] = {}

    def add(e: Entity) -> tuple[str, str] | None:
        require_entity_type(e.type)
        surface, key = surface_and_key(e.name)
        if not surface:
            return None
        te = (e.type, key)
        if te not in entities:
            entities[te] = surface
        return te

    for e in extraction.entities:
        add(e)
    relations: dict[str, list[dict[str, str]]] = defaultdict(list)
    seen: set[tuple[str, str, str, str, str]] = set()
    for rel in extraction.relations:
        rel_type = require_relation_type(rel.type)
        src, dst = add(rel.source), add(rel.target)
        if src is None or dst is None:
            continue
        sig = (rel_type, *src, *dst)
        if sig in seen:
            continue
        seen.add(sig)
        relations[rel_type].append({"st": src[0], "sk": src[1], "tt": dst[0], "tk": dst[1]})
    return entities, dict(relations)
