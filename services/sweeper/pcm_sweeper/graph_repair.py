"""Graph repair (issue 5, whitepaper §2.6): the graph converges on the vector store, which is
the system of record for memories.

- ``republish_unextracted``: a memory whose extraction never completed (graph-extractor or
  graph down past the bus retries, an entry dead-lettered, or graph data lost) is published
  again on ``pcm.memory.written``; the consumers are idempotent.
- ``remove_orphan_facts``: memory nodes of deleted memories (a delete event lost, or a
  stale redelivery that re-created facts after the delete) are removed with their facts and
  any entity no memory mentions any more. Only on positive evidence: a tombstone recorded
  when the memory was deleted (`pcm_common.stores.redis.tombstones`), and the vector store no longer
  holding it; a memory merely absent from the vector store (a store answering empty, another
  deployment sharing the graph server and the tenant's name) is never touched.

Both are idempotent and page through the tenant, so a run cut short is simply run again.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from pcm_common.domain.memory import MemoryRecord, Source
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryWritten
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.tombstones import deleted
from pcm_common.stores.vectors import Filter, ScoredPoint

log = get_logger("sweeper.graph_repair")

PAGE = 256
GRAPH_PAGE = 1000


async def republish_unextracted(
    res: SweeperPorts,
    tenant: str,
    now: datetime,
    grace_s: float,
    *,
    check_graph: bool = True,
) -> int:
    """Publish again every memory ingested more than ``grace_s`` ago whose facts are not in
    the graph: marked not extracted, or (``check_graph``) marked extracted but without a
    memory node in the graph (graph restored or wiped). Returns how many were published.

    Each memory is published at most once per grace period (a Redis marker), so a consumer
    that keeps failing is not flooded; its entries dead-letter after ``max_deliveries``.
    """
    cutoff = now - timedelta(seconds=grace_s)
    ttl = max(1, math.ceil(grace_s))
    published = 0

    async def publish(recs: list[MemoryRecord]) -> int:
        fresh = []
        for rec in recs:
            if await res.redis.set(keys.graph_republished(tenant, rec.id), 1, nx=True, ex=ttl):
                fresh.append(rec)
        if fresh:
            await res.bus.publish_many(
                STREAM_WRITTEN, [MemoryWritten.of(r, "repair") for r in fresh]
            )
            log.info("graph_republished", tenant=tenant, n=len(fresh))
        return len(fresh)

    def due(points: list[ScoredPoint]) -> list[MemoryRecord]:
        recs = [MemoryRecord.from_payload(p.payload) for p in points]
        # Consolidation records summarise memories that are already in the graph.
        return [r for r in recs if r.ingested_at <= cutoff and r.source != Source.CONSOLIDATION]

    async for points in res.vectors.pages(
        tenant, flt=Filter(must={"graph.extracted": False}), size=PAGE
    ):
        published += await publish(due(points))

    if check_graph:
        async for points in res.vectors.pages(
            tenant, flt=Filter(must={"graph.extracted": True}), size=PAGE
        ):
            recs = due(points)
            if recs:
                present = await res.graph.existing_memories(tenant, [r.id for r in recs])
                published += await publish([r for r in recs if r.id not in present])
    return published


async def remove_orphan_facts(res: SweeperPorts, tenant: str) -> int:
    """Remove the facts of graph memories that were deleted: tombstoned, and absent from
    the vector store when asked right before. Pages through the graph's memory ids
    (ascending); one Redis round trip per page, vector lookups for tombstoned ids only.
    Refuses to act (0, logged) when the vector store holds no memory of the tenant at all:
    an empty answer is no evidence. Returns how many memories' facts were removed."""
    if await res.vectors.count(tenant) == 0:
        log.warning("graph_repair_refused", tenant=tenant, reason="vector store holds nothing")
        return 0
    removed = 0
    after: str | None = None
    while True:
        ids = await res.graph.memory_ids(tenant, after=after, limit=GRAPH_PAGE)
        if not ids:
            return removed
        dead = sorted(await deleted(res.redis, tenant, ids))
        if dead:
            still = {p.id for p in await res.vectors.get(tenant, dead)}
            gone = [m for m in dead if m not in still]
            if gone:
                removed += await res.graph.delete_memories(tenant, gone)
                log.info("graph_orphans_removed", tenant=tenant, n=len(gone))
        after = ids[-1]
