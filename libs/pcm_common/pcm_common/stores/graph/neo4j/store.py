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
26.10's Bolt plugin): MERGE, UNWIND, list comprehensions and indexing, collect(), EXISTS
subqueries. Every write is a MERGE, so uniqueness holds even where a backend refuses a
constraint.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from neo4j import (
    READ_ACCESS,
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    Query,
    unit_of_work,
)
from neo4j.exceptions import ConstraintError, Neo4jError

from pcm_common.stores.graph.port import Entity, EntityLinks, Extraction, GraphStore, Relation
from pcm_common.stores.graph.schema import (
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

# Batched writes: every statement UNWINDs rows that are unique within it (one row per
# memory, entity, mention or relation), so no row depends on another row's write in the
# same statement; that keeps the result identical on Neo4j and ArcadeDB.
# Rows are [type, key, name] lists: smaller to pack and send than maps.
_MERGE_ENTITIES = f"""
UNWIND $entities AS row
MERGE (e:{ENTITY_LABEL} {{tenant: $tenant, type: row[0], key: row[1]}})
  ON CREATE SET e.name = row[2]
RETURN count(e) AS n
"""

# One row per memory with its entities as [type, key] pairs: the memory node is looked up
# once, not once per mention, and the rows carry no repeated ids or field names.
_MERGE_MEMORY_MENTIONS = f"""
UNWIND $mems AS row
MERGE (m:{MEMORY_LABEL} {{tenant: $tenant, id: row.mid}})
WITH m, row
UNWIND row.ents AS te
MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, type: te[0], key: te[1]}})
MERGE (m)-[x:{MENTIONS} {{tenant: $tenant}}]->(e)
RETURN count(x) AS n
"""

# The common batch in one statement (one round trip): the memories the graph already holds
# (only those need a prune; collected before anything is written), then the entities, the
# memories and their mentions. A mention names its entity by position in $entities, a list
# index instead of an index lookup. The collect() is an aggregation barrier, so every entity
# exists before any mention; `aligned` checks that it kept the rows' order (both backends
# do). If it did not, no mention is written and no row comes back, and the caller writes
# the keyed statements above instead. Needs at least one entity: an empty UNWIND before the
# collect would leave no row to carry on.
_WRITE_NODES = f"""
UNWIND $mids AS mid
OPTIONAL MATCH (o:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
WITH collect(o.id) AS old
UNWIND $entities AS row
MERGE (e:{ENTITY_LABEL} {{tenant: $tenant, type: row[0], key: row[1]}})
  ON CREATE SET e.name = row[2]
WITH old, collect(e) AS es, collect(row) = $entities AS aligned
UNWIND CASE WHEN aligned THEN $mems ELSE [] END AS row
MERGE (m:{MEMORY_LABEL} {{tenant: $tenant, id: row[0]}})
WITH old, es, m, row
UNWIND row[1] AS i
WITH old, m, es[i] AS e
MERGE (m)-[x:{MENTIONS} {{tenant: $tenant}}]->(e)
RETURN old, count(x) AS n
"""

# {rel} is a validated member of RELATION_TYPES (stores.graph.schema), never caller text.
# One row per relation with every memory of the batch that states it (row.mids).
# `SET r.tenant = $tenant` writes an unchanged value to take Neo4j's write lock before
# memory_ids is read, so two writers adding memories at once cannot lose an update
# (ArcadeDB's optimistic MVCC raises a retryable conflict instead). The WHERE makes a
# redelivery a no-op: memory_ids, strength and last_seen stay as they were.
_MERGE_RELATIONS = """
UNWIND $rels AS row
MATCH (a:{entity} {{tenant: $tenant, type: row.st, key: row.sk}})
MATCH (b:{entity} {{tenant: $tenant, type: row.tt, key: row.tk}})
MERGE (a)-[r:{rel} {{tenant: $tenant}}]->(b)
  ON CREATE SET r.memory_ids = [], r.first_seen = $now, r.last_seen = $now, r.strength = 0.0
SET r.tenant = $tenant
WITH r, [x IN row.mids WHERE NOT x IN r.memory_ids] AS added
WHERE size(added) > 0
WITH r, r.memory_ids + added AS ids
SET r.memory_ids = ids, r.last_seen = $now, r.strength = toFloat(size(ids)) / (size(ids) + 1)
RETURN count(r) AS n
"""

# Withdraw memories from relations they no longer state (all of them when a memory's keep
# list is empty). Endpoints are always mentioned by the memory, so the walk starts at its
# node. Grouping by r applies each relationship's change once even when several memories
# of the batch withdraw from it.
_PRUNE_RELATIONS = f"""
UNWIND $items AS it
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: it.mid}})-[:{MENTIONS}]->(a:{ENTITY_LABEL})
MATCH (a)-[r]->(b:{ENTITY_LABEL})
WHERE r.tenant = $tenant AND it.mid IN r.memory_ids
  AND NOT (type(r) + '|' + a.type + '|' + a.key + '|' + b.type + '|' + b.key) IN it.keep
WITH r, collect(DISTINCT it.mid) AS gone
SET r.tenant = $tenant
WITH r, [x IN r.memory_ids WHERE NOT x IN gone] AS ids
SET r.memory_ids = ids, r.strength = toFloat(size(ids)) / (size(ids) + 1)
WITH r, ids
WHERE size(ids) = 0
DELETE r
RETURN count(*) AS n
"""

_PRUNE_MENTIONS = f"""
UNWIND $items AS it
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: it.mid}})-[x:{MENTIONS}]->(e:{ENTITY_LABEL})
WHERE NOT (e.type + '|' + e.key) IN it.keep
DELETE x
RETURN DISTINCT e.type AS type, e.key AS key
"""

_DELETE_ORPHANS = f"""
UNWIND $cands AS c
MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, type: c.type, key: c.key}})
WHERE NOT EXISTS {{ MATCH (e)<-[:{MENTIONS}]-(:{MEMORY_LABEL}) }}
DETACH DELETE e
RETURN count(*) AS n
"""

_DELETE_MEMORIES = f"""
UNWIND $mids AS mid
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
DETACH DELETE m
RETURN count(*) AS n
"""

_ENTITIES_OF = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(e:{ENTITY_LABEL})
RETURN e.name AS name, e.type AS type, e.key AS key
ORDER BY type, key
"""

# Relations leaving the memory's entities (type(r) names the family; MENTIONS is not one).
_RELATIONS_OF = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(a:{ENTITY_LABEL})
MATCH (a)-[r]->(b:{ENTITY_LABEL})
WHERE r.tenant = $tenant AND b.tenant = $tenant
RETURN a.name AS a_name, a.type AS a_type, type(r) AS rel, b.name AS b_name, b.type AS b_type
ORDER BY rel, a_name, b_name
LIMIT $limit
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

# Recall's single round trip: per query entity found, its document frequency and, when not
# too broad, the memories that mention it, with the other asked entities those memories
# mention too. One row per asked key (a key the tenant lacks gives a null entity). The keys
# are UNWOUND into an equality pattern rather than filtered with `e.key IN $keys`: on
# ArcadeDB the IN form plans the MENTIONS expansion badly (LoCoMo conversation, ~20 n-gram
# keys: 28 ms vs 0.7 ms; Neo4j is indifferent).
_ENTITY_MENTIONS = f"""
UNWIND $keys AS k
OPTIONAL MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, key: k}})
OPTIONAL MATCH (m:{MEMORY_LABEL})-[:{MENTIONS}]->(e)
WITH e, collect(m.id) AS mids
"""
# The walks below start from `w`, null for an entity too broad to walk: an OPTIONAL MATCH
# from null expands nothing, where a size test in its WHERE ran after the whole expansion
# (ArcadeDB, an entity in 500 of 10k memories: 8.4 vs 4.6 ms for the lookup).
_CO_MENTIONS = f"""
WITH e, mids, CASE WHEN size(mids) <= $max_df THEN e END AS w
OPTIONAL MATCH (w)<-[:{MENTIONS}]-(c:{MEMORY_LABEL})-[:{MENTIONS}]->(o:{ENTITY_LABEL})
WHERE o.key IN $keys AND o <> w
WITH e, mids, collect(DISTINCT CASE WHEN c IS NULL THEN null ELSE [c.id, o.type, o.key] END) AS co
"""
_LINKS_RETURN = """
RETURN e.key AS key, e.type AS type, size(mids) AS df,
       CASE WHEN size(mids) <= $max_df THEN mids ELSE [] END AS mids, co"""
_ENTITY_LINKS = _ENTITY_MENTIONS + _CO_MENTIONS + _LINKS_RETURN
# The same, plus each entity's memories that also mention an entity of one of $types
# (bounded by $typed_max_df: a broad entity's memories would be a long walk). A separate
# text so that queries without a type word keep the cheaper plan.
_ENTITY_LINKS_TYPED = (
    _ENTITY_MENTIONS
    + _CO_MENTIONS
    + f"""
WITH e, mids, co, CASE WHEN size(mids) <= $typed_max_df THEN e END AS w
OPTIONAL MATCH (w)<-[:{MENTIONS}]-(t:{MEMORY_LABEL})-[:{MENTIONS}]->(x:{ENTITY_LABEL})
WHERE x.type IN $types AND x.key <> w.key
WITH e, mids, co, collect(DISTINCT t.id) AS typed
"""
    + _LINKS_RETURN
    + ", typed"
)

_MEMORY_IDS = f"""
MATCH (m:{MEMORY_LABEL})
WHERE m.tenant = $tenant AND m.id > $after
RETURN m.id AS id
ORDER BY id
LIMIT $limit
"""

_EXISTING = f"""
UNWIND $mids AS mid
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
RETURN m.id AS id
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
            # Transient errors (deadlocks, MVCC conflicts, a server away) are retried this
            # long inside a write; bounded by the timeout so a dead graph fails the event
            # soon enough for the bus to retry and dead-letter it.
            max_transaction_retry_time=min(15.0, max(1.0, 5 * timeout_s)),
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
        await self.write_facts_many([(tenant, memory_id, extraction)])

    async def write_facts_many(self, items: Sequence[tuple[str, str, Extraction]]) -> None:
        """Set-based writes: one transaction per tenant, a fixed number of UNWIND statements
        whatever the batch size (plus one per relation family present)."""
        # Validate everything before any write; a later item for the same memory wins.
        by_tenant: dict[str, dict[str, _Normalized]] = defaultdict(dict)
        for tenant, memory_id, extraction in items:
            by_tenant[tenant][memory_id] = self._normalize(extraction)
        now = int(time.time() * 1000)
        for tenant in sorted(by_tenant):
            await self._write(_batch_work(tenant, by_tenant[tenant], now))

    async def delete_memory(self, tenant: str, memory_id: str) -> None:
        await self.delete_memories(tenant, [memory_id])

    async def delete_memories(self, tenant: str, memory_ids: Sequence[str]) -> int:
        """Remove these memories' facts and nodes; returns how many memory nodes existed."""
        mids = sorted(set(memory_ids))
        if not mids:
            return 0
        deleted = 0

        async def work(tx: AsyncManagedTransaction) -> None:
            nonlocal deleted
            await _prune(tx, tenant, [{"mid": m, "keep": []} for m in mids], [])
            rows = await _fetch(tx, _DELETE_MEMORIES, tenant=tenant, mids=mids)
            deleted = int(rows[0]["n"]) if rows else 0

        await self._write(work)
        return deleted

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
    def _normalize(extraction: Extraction) -> _Normalized:
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

    # -- reads --------------------------------------------------------------------------

    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        rows = await self._read(_ENTITIES_OF, tenant=tenant, mid=memory_id)
        return [Entity(name=r["name"], type=r["type"]) for r in rows]

    async def relations_of(self, tenant: str, memory_id: str, *, limit: int = 50) -> list[Relation]:
        rows = await self._read(_RELATIONS_OF, tenant=tenant, mid=memory_id, limit=limit)
        return [
            Relation(
                source=Entity(name=r["a_name"], type=r["a_type"]),
                type=r["rel"],
                target=Entity(name=r["b_name"], type=r["b_type"]),
            )
            for r in rows
        ]

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

    async def entity_links(
        self,
        tenant: str,
        names: Sequence[str],
        *,
        max_df: int,
        types: Sequence[str] = (),
        typed_max_df: int = 0,
    ) -> list[EntityLinks]:
        keys = sorted({k for k in (canonical_key(n) for n in names) if k})
        if not keys:
            return []
        # An auto-commit query: RUN and PULL go out together, so it is one network round
        # trip (a managed transaction would add BEGIN and COMMIT). The server-side timeout
        # bounds the query; the caller bounds the whole call with its own deadline.
        async with self._driver.session(
            database=self._database, default_access_mode=READ_ACCESS
        ) as session:
            result = await session.run(
                Query(_ENTITY_LINKS_TYPED if types else _ENTITY_LINKS, timeout=self._timeout_s),
                tenant=tenant,
                keys=keys,
                max_df=max_df,
                types=sorted(set(types)),
                typed_max_df=typed_max_df,
            )
            rows = [record.data() async for record in result]
        return [
            EntityLinks(
                key=str(r["key"]),
                type=str(r["type"]),
                df=int(r["df"]),
                memory_ids=tuple(str(m) for m in r["mids"]),
                typed=tuple(str(m) for m in r.get("typed") or ()),
                co=tuple(sorted((str(m), str(t), str(k)) for m, t, k in r["co"])),
            )
            for r in rows
            if r["key"] is not None
        ]

    async def memory_ids(
        self, tenant: str, *, after: str | None = None, limit: int = 1000
    ) -> list[str]:
        rows = await self._read(_MEMORY_IDS, tenant=tenant, after=after or "", limit=limit)
        return [str(r["id"]) for r in rows]

    async def existing_memories(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        mids = sorted(set(memory_ids))
        if not mids:
            return set()
        rows = await self._read(_EXISTING, tenant=tenant, mids=mids)
        return {str(r["id"]) for r in rows}

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


_Normalized = tuple[dict[tuple[str, str], str], dict[str, list[dict[str, str]]]]


def _batch_work(tenant: str, memories: dict[str, _Normalized], now: int) -> Any:
    """Transaction function writing ``memories`` ({memory_id: normalized facts}) as the
    complete fact set of each memory."""
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
    # Sorted rows: concurrent batches lock shared entities and relations in the same order,
    # which keeps Neo4j deadlocks (retried, but slow) rare.
    order = sorted(entity_rows)
    entities_sorted = [entity_rows[key] for key in order]
    position = {key: i for i, key in enumerate(order)}
    # [memory id, [entity positions]]: lists pack smaller than maps.
    indexed_rows = [[mid, [position[e] for e in memories[mid][0]]] for mid in mids]
    rels_sorted = {
        rt: [
            {"st": st, "sk": sk, "tt": tt, "tk": tk, "mids": ms}
            for (st, sk, tt, tk), ms in sorted(rows.items())
        ]
        for rt, rows in rel_mids.items()
    }

    async def work(tx: AsyncManagedTransaction) -> None:
        written = []
        if entities_sorted:
            written = await _fetch(
                tx,
                _WRITE_NODES,
                tenant=tenant,
                mids=mids,
                entities=entities_sorted,
                mems=indexed_rows,
            )
        # Aligned, the count is at least one: every entity row comes from some memory.
        if written and int(written[0]["n"]) > 0:
            old = sorted(str(m) for m in written[0]["old"])
        else:
            # No entities, or collect() reordered rows: the same writes as keyed rows.
            rows = await _fetch(tx, _EXISTING, tenant=tenant, mids=mids)
            old = sorted(str(r["id"]) for r in rows)
            if entities_sorted:
                await _run(tx, _MERGE_ENTITIES, tenant=tenant, entities=entities_sorted)
            keyed = [{"mid": mid, "ents": [list(e) for e in memories[mid][0]]} for mid in mids]
            await _run(tx, _MERGE_MEMORY_MENTIONS, tenant=tenant, mems=keyed)
        if old:
            # Only facts outside the keep lists are withdrawn, so pruning after the merges
            # above leaves what it would have left before them.
            await _prune(
                tx,
                tenant,
                [_prune_item(mid, memories[mid]) for mid in old],
                [f"{t}|{k}" for (t, k) in order],
            )
        for rel_type in sorted(rels_sorted):
            query = _MERGE_RELATIONS.format(entity=ENTITY_LABEL, rel=rel_type)
            await _run(tx, query, tenant=tenant, rels=rels_sorted[rel_type], now=now)

    return work


def _prune_item(mid: str, facts: _Normalized) -> dict[str, Any]:
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


async def _prune(
    tx: AsyncManagedTransaction,
    tenant: str,
    items: list[dict[str, Any]],
    still_used: list[str],
) -> None:
    """Withdraw each memory from the facts not in its keep lists and delete entities no
    memory mentions any more (``still_used``: entities the batch is about to mention).

    ``items``: {mid, keep: relation signatures, keep_entities: "type|key"}.
    """
    await _run(tx, _PRUNE_RELATIONS, tenant=tenant, items=items)
    mention_items = [{"mid": it["mid"], "keep": it.get("keep_entities", [])} for it in items]
    result = await tx.run(_PRUNE_MENTIONS, tenant=tenant, items=mention_items)
    used = set(still_used)
    cands = {
        (r["type"], r["key"]): {"type": r["type"], "key": r["key"]}
        async for r in result
        if f"{r['type']}|{r['key']}" not in used
    }
    if cands:
        await _run(tx, _DELETE_ORPHANS, tenant=tenant, cands=[cands[k] for k in sorted(cands)])


async def _run(tx: AsyncManagedTransaction, query: str, **params: Any) -> None:
    result = await tx.run(query, **params)
    await result.consume()


async def _fetch(tx: AsyncManagedTransaction, query: str, **params: Any) -> list[dict[str, Any]]:
    result = await tx.run(query, **params)
    return [record.data() async for record in result]
