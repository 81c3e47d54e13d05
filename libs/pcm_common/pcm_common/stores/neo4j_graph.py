"""GraphStore adapter over Bolt: a Neo4j 5 server or the embedded ArcadeDB Bolt server.

Model (every node and relationship carries ``tenant``):

    (:Memory {tenant, id})-[:MENTIONS {tenant}]->(:Entity {tenant, type, key, name})
    (:Entity)-[:<FAMILY> {tenant, memory_ids, first_seen, last_seen, strength}]->(:Entity)

``key`` is the canonical name (``Entity.key``); ``name`` is the surface form first seen.
A relation's ``memory_ids`` lists the memories that state it, so its ``strength`` is a
function of that set (``n / (n + 1)``) and a redelivered event changes nothing.

``write_facts`` makes the memory's facts equal to the extraction: facts the memory stated
before but no longer does are pruned as in ``delete_memory``. That keeps redelivery
idempotent and lets a re-extraction (after an edit) correct the graph.

Only Cypher that both backends run is used (checked against Neo4j 5.26 and ArcadeDB
26.10's Bolt plugin): MERGE, UNWIND, list comprehensions, EXISTS subqueries. Every write
is a MERGE, so uniqueness holds even where a backend refuses a constraint.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncManagedTransaction, unit_of_work
from neo4j.exceptions import ConstraintError, Neo4jError

from .graph import Entity, Extraction, GraphStore
from .graph_schema import (
    ENTITY_LABEL,
    MEMORY_LABEL,
    MENTIONS,
    require_entity_type,
    require_relation_type,
)

log = logging.getLogger(__name__)

# ArcadeDB's MERGE is not atomic against a concurrent MERGE of the same new node: the
# loser fails with ConstraintValidationFailed (a client error the driver does not retry).
# Re-running the whole write then finds the node and succeeds. Neo4j locks the unique
# index entry instead, so there this never fires.
_CONSTRAINT_RETRIES = 5

# Schema statements; each runs on its own (Neo4j refuses schema and data in one tx).
_CONSTRAINTS = (
    (
        f"CREATE CONSTRAINT pcm_memory_tenant_id IF NOT EXISTS "
        f"FOR (m:{MEMORY_LABEL}) REQUIRE (m.tenant, m.id) IS UNIQUE",
        f"CREATE INDEX pcm_memory_tenant_id IF NOT EXISTS "
        f"FOR (m:{MEMORY_LABEL}) ON (m.tenant, m.id)",
    ),
    (
        f"CREATE CONSTRAINT pcm_entity_tenant_type_key IF NOT EXISTS "
        f"FOR (e:{ENTITY_LABEL}) REQUIRE (e.tenant, e.type, e.key) IS UNIQUE",
        f"CREATE INDEX pcm_entity_tenant_type_key IF NOT EXISTS "
        f"FOR (e:{ENTITY_LABEL}) ON (e.tenant, e.type, e.key)",
    ),
)
_INDEXES = (
    # memories_for looks entities up by key without knowing the type.
    f"CREATE INDEX pcm_entity_tenant_key IF NOT EXISTS FOR (e:{ENTITY_LABEL}) ON (e.tenant, e.key)",
    f"CREATE INDEX pcm_entity_tenant_name IF NOT EXISTS "
    f"FOR (e:{ENTITY_LABEL}) ON (e.tenant, e.name)",
)

_MERGE_MEMORY_AND_MENTIONS = f"""
MERGE (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})
WITH m
UNWIND $entities AS row
MERGE (e:{ENTITY_LABEL} {{tenant: $tenant, type: row.type, key: row.key}})
  ON CREATE SET e.name = row.name
MERGE (m)-[x:{MENTIONS} {{tenant: $tenant}}]->(e)
RETURN count(x) AS n
"""

# {rel} is a validated member of RELATION_TYPES (graph_schema), never caller text.
# `SET r.tenant = $tenant` writes an unchanged value to take Neo4j's write lock before
# memory_ids is read, so two memories adding themselves at once cannot lose an update
# (ArcadeDB's optimistic MVCC raises a retryable conflict instead). The WHERE makes a
# redelivery a no-op: memory_ids, strength and last_seen stay as they were.
_MERGE_RELATIONS = """
UNWIND $rels AS row
MATCH (a:{entity} {{tenant: $tenant, type: row.st, key: row.sk}})
MATCH (b:{entity} {{tenant: $tenant, type: row.tt, key: row.tk}})
MERGE (a)-[r:{rel} {{tenant: $tenant}}]->(b)
  ON CREATE SET r.memory_ids = [], r.first_seen = $now, r.last_seen = $now, r.strength = 0.0
SET r.tenant = $tenant
WITH r
WHERE NOT $mid IN r.memory_ids
WITH r, r.memory_ids + [$mid] AS ids
SET r.memory_ids = ids, r.last_seen = $now, r.strength = toFloat(size(ids)) / (size(ids) + 1)
RETURN count(r) AS n
"""

# Relations this memory stated that are not in $keep (all of them when $keep is empty).
# Relation endpoints are always mentioned by the memory, so the walk starts at its node.
_PRUNE_RELATIONS = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(a:{ENTITY_LABEL})
MATCH (a)-[r]->(b:{ENTITY_LABEL})
WHERE r.tenant = $tenant AND $mid IN r.memory_ids
  AND NOT (type(r) + '|' + a.type + '|' + a.key + '|' + b.type + '|' + b.key) IN $keep
SET r.tenant = $tenant
WITH r, [x IN r.memory_ids WHERE x <> $mid] AS ids
SET r.memory_ids = ids, r.strength = toFloat(size(ids)) / (size(ids) + 1)
WITH r, ids
WHERE size(ids) = 0
DELETE r
RETURN count(*) AS n
"""

_PRUNE_MENTIONS = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[x:{MENTIONS}]->(e:{ENTITY_LABEL})
WHERE NOT (e.type + '|' + e.key) IN $keep
DELETE x
RETURN e.type AS type, e.key AS key
"""

_DELETE_ORPHANS = f"""
UNWIND $cands AS c
MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, type: c.type, key: c.key}})
WHERE NOT EXISTS {{ MATCH (e)<-[:{MENTIONS}]-(:{MEMORY_LABEL}) }}
DETACH DELETE e
RETURN count(*) AS n
"""

_DELETE_MEMORY = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})
DETACH DELETE m
RETURN count(*) AS n
"""

_ENTITIES_OF = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(e:{ENTITY_LABEL})
RETURN e.name AS name, e.type AS type, e.key AS key
ORDER BY type, key
"""

_FOUND_KEYS = f"""
MATCH (e:{ENTITY_LABEL})
WHERE e.tenant = $tenant AND e.key IN $keys
RETURN count(DISTINCT e.key) AS n
"""

_MEMORIES_FOR = f"""
MATCH (e:{ENTITY_LABEL})
WHERE e.tenant = $tenant AND e.key IN $keys
MATCH (m:{MEMORY_LABEL})-[:{MENTIONS}]->(e)
WHERE m.tenant = $tenant
RETURN m.id AS id, count(DISTINCT e.key) AS hits
ORDER BY hits DESC, id
LIMIT $limit
"""

_STATS = {
    "memories": f"MATCH (m:{MEMORY_LABEL} {{tenant: $tenant}}) RETURN count(m) AS n",
    "entities": f"MATCH (e:{ENTITY_LABEL} {{tenant: $tenant}}) RETURN count(e) AS n",
    "mentions": (
        f"MATCH (:{MEMORY_LABEL} {{tenant: $tenant}})-[x:{MENTIONS}]->(:{ENTITY_LABEL}) "
        "RETURN count(x) AS n"
    ),
    "relations": (
        f"MATCH (:{ENTITY_LABEL} {{tenant: $tenant}})-[r]->(:{ENTITY_LABEL}) "
        "WHERE r.tenant = $tenant RETURN count(r) AS n"
    ),
}


def canonical_key(name: str) -> str:
    """Same canonical form as ``Entity.key`` (case- and whitespace-insensitive)."""
    return " ".join(name.split()).casefold()


def _relation_sig(rel_type: str, st: str, sk: str, tt: str, tk: str) -> str:
    # Must match the string the prune query builds from the stored relationship.
    return f"{rel_type}|{st}|{sk}|{tt}|{tk}"


class Neo4jGraphStore(GraphStore):
    """GraphStore on the official async neo4j driver (Neo4j 5 or ArcadeDB's Bolt)."""

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str = "",
        timeout_s: float = 2.0,
    ) -> None:
        self._database = database or None  # None: the server's default/home database
        self._timeout_s = timeout_s
        self._driver: AsyncDriver = AsyncGraphDatabase.driver(
            uri,
            auth=(user, password),
            connection_timeout=timeout_s,
            connection_acquisition_timeout=max(timeout_s, 5.0),
            # Transient errors (deadlocks, MVCC conflicts) are retried this long.
            max_transaction_retry_time=15.0,
        )
        # What ensure_schema managed to create, for diagnostics (`pcm doctor`).
        self.schema_report: dict[str, str] = {}

    # -- schema -------------------------------------------------------------------------

    async def ensure_schema(self) -> None:
        report: dict[str, str] = {}
        for constraint, fallback_index in _CONSTRAINTS:
            name = constraint.split()[2]
            if await self._try_schema(constraint):
                report[name] = "constraint"
            elif await self._try_schema(fallback_index):
                # MERGE still keeps (tenant, id)/(tenant, type, key) unique.
                report[name] = "index"
            else:
                report[name] = "none"
        for index in _INDEXES:
            report[index.split()[2]] = "index" if await self._try_schema(index) else "none"
        self.schema_report = report
        if "none" in report.values() or "index" in {report[c[0].split()[2]] for c in _CONSTRAINTS}:
            log.warning("graph schema degraded (MERGE still keeps keys unique): %s", report)

    async def _try_schema(self, statement: str) -> bool:
        try:
            async with self._driver.session(database=self._database) as session:
                result = await session.run(statement)
                await result.consume()
            return True
        except Neo4jError as exc:
            # A backend without this syntax answers with a client error; keep going.
            log.info("schema statement refused (%s): %s", exc.code, statement)
            return False

    # -- writes -------------------------------------------------------------------------

    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        entities, relations = self._normalize(extraction)  # raises before any write
        keep_entities = [f"{t}|{k}" for (t, k) in entities]
        keep_relations = [
            _relation_sig(rt, row["st"], row["sk"], row["tt"], row["tk"])
            for rt, rows in relations.items()
            for row in rows
        ]
        entity_rows = [{"type": t, "key": k, "name": n} for (t, k), n in entities.items()]
        now = int(time.time() * 1000)

        async def work(tx: AsyncManagedTransaction) -> None:
            await self._prune(tx, tenant, memory_id, keep_entities, keep_relations)
            await _run(
                tx, _MERGE_MEMORY_AND_MENTIONS, tenant=tenant, mid=memory_id, entities=entity_rows
            )
            for rel_type in sorted(relations):
                query = _MERGE_RELATIONS.format(entity=ENTITY_LABEL, rel=rel_type)
                await _run(
                    tx, query, tenant=tenant, mid=memory_id, rels=relations[rel_type], now=now
                )

        await self._write(work)

    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        async def work(tx: AsyncManagedTransaction) -> None:
            await self._prune(tx, tenant, memory_id, [], [])
            await _run(tx, _DELETE_MEMORY, tenant=tenant, mid=memory_id)

        await self._write(work)

    async def _write(self, work: Any) -> None:
        """execute_write (retries transient errors) plus retries of MERGE races."""
        for attempt in range(_CONSTRAINT_RETRIES + 1):
            try:
                async with self._driver.session(database=self._database) as session:
                    await session.execute_write(work)
                return
            except ConstraintError:
                if attempt == _CONSTRAINT_RETRIES:
                    raise
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))

    @staticmethod
    async def _prune(
        tx: AsyncManagedTransaction,
        tenant: str,
        memory_id: str,
        keep_entities: list[str],
        keep_relations: list[str],
    ) -> None:
        """Withdraw the memory from facts not in the keep lists; drop what is left empty."""
        await _run(tx, _PRUNE_RELATIONS, tenant=tenant, mid=memory_id, keep=keep_relations)
        result = await tx.run(_PRUNE_MENTIONS, tenant=tenant, mid=memory_id, keep=keep_entities)
        cands = [{"type": r["type"], "key": r["key"]} async for r in result]
        if cands:
            await _run(tx, _DELETE_ORPHANS, tenant=tenant, cands=cands)

    @staticmethod
    def _normalize(
        extraction: Extraction,
    ) -> tuple[dict[tuple[str, str], str], dict[str, list[dict[str, str]]]]:
        """Validate against the closed sets and de-duplicate.

        Returns entities {(type, key): first surface name} (relation endpoints included,
        so the memory mentions every entity it relates) and relation rows by family.
        """
        entities: dict[tuple[str, str], str] = {}

        def add(e: Entity) -> tuple[str, str] | None:
            require_entity_type(e.type)
            key = canonical_key(e.name)
            if not key:
                return None
            entities.setdefault((e.type, key), " ".join(e.name.split()))
            return (e.type, key)

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

    # -- reads --------------------------------------------------------------------------

    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        rows = await self._read(_ENTITIES_OF, tenant=tenant, mid=memory_id)
        return [Entity(name=r["name"], type=r["type"]) for r in rows]

    async def memories_for(
        self, tenant: str, names: Sequence[str], *, limit: int = 50
    ) -> dict[str, float]:
        """Strength = share of the query's known entities (by key) the memory mentions.

        Names that match no entity of the tenant are left out of the share, so a query
        naming one known and three unknown things still links fully to the known one.
        """
        keys = sorted({k for k in (canonical_key(n) for n in names) if k})
        if not keys or limit <= 0:
            return {}

        async def work(tx: AsyncManagedTransaction) -> dict[str, float]:
            found_rows = await _fetch(tx, _FOUND_KEYS, tenant=tenant, keys=keys)
            found = int(found_rows[0]["n"]) if found_rows else 0
            if found == 0:
                return {}
            rows = await _fetch(tx, _MEMORIES_FOR, tenant=tenant, keys=keys, limit=limit)
            return {str(r["id"]): min(1.0, int(r["hits"]) / found) for r in rows}

        async with self._driver.session(database=self._database) as session:
            return await session.execute_read(unit_of_work(timeout=self._timeout_s)(work))

    async def stats(self, tenant: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, query in _STATS.items():
            rows = await self._read(query, tenant=tenant)
            out[name] = int(rows[0]["n"]) if rows else 0
        return out

    async def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await _fetch(tx, query, **params)

        async with self._driver.session(database=self._database) as session:
            return await session.execute_read(unit_of_work(timeout=self._timeout_s)(work))

    # -- lifecycle ----------------------------------------------------------------------

    async def ping(self) -> bool:
        # Auto-commit, not execute_read: a health check must not sit in the driver's
        # retry loop while the server is down.
        try:
            async with asyncio.timeout(self._timeout_s):
                async with self._driver.session(database=self._database) as session:
                    result = await session.run("RETURN 1 AS n")
                    record = await result.single()
            return record is not None and record["n"] == 1
        except Exception:  # any failure means "not answering" to health checks
            return False

    async def close(self) -> None:
        await self._driver.close()


async def _run(tx: AsyncManagedTransaction, query: str, **params: Any) -> None:
    result = await tx.run(query, **params)
    await result.consume()


async def _fetch(tx: AsyncManagedTransaction, query: str, **params: Any) -> list[dict[str, Any]]:
    result = await tx.run(query, **params)
    return [record.data() async for record in result]
