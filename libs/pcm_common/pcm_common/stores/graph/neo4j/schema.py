"""The graph's uniqueness constraints and lookup indexes, created where the backend takes
them: a backend that refuses a constraint gets a plain index (MERGE still keeps the keys
unique), one that refuses both gets none. Each statement runs on its own (Neo4j refuses
schema and data in one transaction)."""

from __future__ import annotations

import logging

from neo4j import AsyncDriver
from neo4j.exceptions import Neo4jError

from pcm_common.stores.graph.schema import ENTITY_LABEL, MEMORY_LABEL

log = logging.getLogger(__name__)

CONSTRAINTS = (
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
INDEXES = (
    # memories_for looks entities up by key without knowing the type.
    f"CREATE INDEX pcm_entity_tenant_key IF NOT EXISTS FOR (e:{ENTITY_LABEL}) ON (e.tenant, e.key)",
    f"CREATE INDEX pcm_entity_tenant_name IF NOT EXISTS "
    f"FOR (e:{ENTITY_LABEL}) ON (e.tenant, e.name)",
)


async def ensure_schema(driver: AsyncDriver, database: str | None) -> dict[str, str]:
    """Create what the backend takes; returns what was made of each (`constraint`,
    `index` or `none`), by name."""
    report: dict[str, str] = {}
    for constraint, fallback_index in CONSTRAINTS:
        name = constraint.split()[2]
        if await _try_schema(driver, database, constraint):
            report[name] = "constraint"
        elif await _try_schema(driver, database, fallback_index):
            # MERGE still keeps (tenant, id)/(tenant, type, key) unique.
            report[name] = "index"
        else:
            report[name] = "none"
    for index in INDEXES:
        report[index.split()[2]] = "index" if await _try_schema(driver, database, index) else "none"
    if "none" in report.values() or "index" in {report[c[0].split()[2]] for c in CONSTRAINTS}:
        log.warning("graph schema degraded (MERGE still keeps keys unique): %s", report)
    return report


async def _try_schema(driver: AsyncDriver, database: str | None, statement: str) -> bool:
    try:
        async with driver.session(database=database) as session:
            result = await session.run(statement)
            await result.consume()
        return True
    except Neo4jError as exc:
        # A backend without this syntax answers with a client error; keep going.
        log.info("schema statement refused (%s): %s", exc.code, statement)
        return False
