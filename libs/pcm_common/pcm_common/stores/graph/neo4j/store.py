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
import contextlib
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

from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.graph.neo4j import queries as q
from pcm_common.stores.graph.neo4j.schema import ensure_schema
from pcm_common.stores.graph.neo4j.writes import (
    CONSTRAINT_RETRIES,
    Normalized,
    batch_work,
    canonical_key,
    fetch,
    normalize,
    prune,
)
from pcm_common.stores.graph.port import Entity, EntityLinks, Extraction, GraphStore, Relation

log = get_logger("graph")


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
        self._auth = (uri, user, password)
        self._driver: AsyncDriver = self._connect()
        # What ensure_schema managed to create, for diagnostics (`pcm doctor`).
        self.schema_report: dict[str, str] = {}

    def _connect(self) -> AsyncDriver:
        uri, user, password = self._auth
        timeout_s = self._timeout_s
        return AsyncGraphDatabase.driver(
            uri,
            auth=(user, password),
            connection_timeout=timeout_s,
            connection_acquisition_timeout=max(timeout_s, 5.0),
            # Transient errors (deadlocks, MVCC conflicts, a server away) are retried this
            # long inside a write; bounded by the timeout so a dead graph fails the event
            # soon enough for the bus to retry and dead-letter it.
            max_transaction_retry_time=min(15.0, max(1.0, 5 * timeout_s)),
        )

    # -- schema -------------------------------------------------------------------------

    async def ensure_schema(self) -> None:
        self.schema_report = await ensure_schema(self._driver, self._database)

    # -- writes -------------------------------------------------------------------------

    async def write_facts(self, tenant: str, memory_id: str, extraction: Extraction) -> None:
        await self.write_facts_many([(tenant, memory_id, extraction)])

    async def write_facts_many(self, items: Sequence[tuple[str, str, Extraction]]) -> None:
        """Set-based writes: one transaction per tenant, a fixed number of UNWIND statements
        whatever the batch size (plus one per relation family present)."""
        # Validate everything before any write; a later item for the same memory wins.
        by_tenant: dict[str, dict[str, Normalized]] = defaultdict(dict)
        for tenant, memory_id, extraction in items:
            by_tenant[tenant][memory_id] = normalize(extraction)
        now = int(time.time() * 1000)
        for tenant in sorted(by_tenant):
            await self._write(batch_work(tenant, by_tenant[tenant], now))

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
            await prune(tx, tenant, [{"mid": m, "keep": []} for m in mids], [])
            rows = await fetch(tx, q.DELETE_MEMORIES, tenant=tenant, mids=mids)
            deleted = int(rows[0]["n"]) if rows else 0

        await self._write(work)
        return deleted

    async def _write(self, work: Any) -> None:
        """execute_write (retries transient errors) plus retries of MERGE races."""
        for attempt in range(CONSTRAINT_RETRIES + 1):
            try:
                async with self._driver.session(database=self._database) as session:
                    await session.execute_write(work)
                return
            except ConstraintError:
                if attempt == CONSTRAINT_RETRIES:
                    raise
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
            except Neo4jError as exc:
                await self._renew_if_stale(exc)
                raise

    async def _renew_if_stale(self, exc: Neo4jError) -> None:
        """A restarted ArcadeDB refuses the driver's pooled connections for good ("BEGIN
        not expected in state: AUTHENTICATION", "credentials ... no longer valid"), where
        Neo4j would make the driver reconnect: a fresh driver then, and the caller's retry
        (the bus's redelivery, the next repair run) goes through it."""
        text = f"{exc.code} {exc.message}"
        if not ("AUTHENTICATION" in text or "no longer valid" in text):
            return
        old, self._driver = self._driver, self._connect()
        log.warning("graph_driver_renewed", error=text[:200])
        with contextlib.suppress(Exception):
            await old.close()

    # -- reads --------------------------------------------------------------------------

    async def entities_of(self, tenant: str, memory_id: str) -> list[Entity]:
        rows = await self._read(q.ENTITIES_OF, tenant=tenant, mid=memory_id)
        return [Entity(name=r["name"], type=r["type"]) for r in rows]

    async def relations_of(self, tenant: str, memory_id: str, *, limit: int = 50) -> list[Relation]:
        rows = await self._read(q.RELATIONS_OF, tenant=tenant, mid=memory_id, limit=limit)
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
            found_rows = await fetch(tx, q.FOUND_KEYS, tenant=tenant, keys=keys)
            found = int(found_rows[0]["n"]) if found_rows else 0
            if found == 0:
                return {}
            rows = await fetch(tx, q.MEMORIES_FOR, tenant=tenant, keys=keys, limit=limit)
            return {str(r["id"]): min(1.0, int(r["hits"]) / found) for r in rows}

        async with self._driver.session(database=self._database) as session:
            return await session.execute_read(unit_of_work(timeout=self._timeout_s)(work))

    async def neighbours(
        self, tenant: str, memory_id: str, *, limit: int = 15
    ) -> dict[str, list[str]]:
        if limit <= 0:
            return {}
        rows = await self._read(q.NEIGHBOURS, tenant=tenant, mid=memory_id, limit=limit + 1)
        near = {str(r["id"]): sorted(set(r["shares"])) for r in rows if r["id"] != memory_id}
        return dict(list(near.items())[:limit])

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
                Query(q.ENTITY_LINKS_TYPED if types else q.ENTITY_LINKS, timeout=self._timeout_s),
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
        rows = await self._read(q.MEMORY_IDS, tenant=tenant, after=after or "", limit=limit)
        return [str(r["id"]) for r in rows]

    async def existing_memories(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        mids = sorted(set(memory_ids))
        if not mids:
            return set()
        rows = await self._read(q.EXISTING, tenant=tenant, mids=mids)
        return {str(r["id"]) for r in rows}

    async def stats(self, tenant: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, query in q.STATS.items():
            rows = await self._read(query, tenant=tenant)
            out[name] = int(rows[0]["n"]) if rows else 0
        return out

    async def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await fetch(tx, query, **params)

        try:
            async with self._driver.session(database=self._database) as session:
                return await session.execute_read(unit_of_work(timeout=self._timeout_s)(work))
        except Neo4jError as exc:
            await self._renew_if_stale(exc)
            raise

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
