"""Searches on Qdrant Edge: one search (dense or hybrid), and batches of searches answered
by the engine in one `query_batch` or, where every filter field is mirrored, by the dense
mirror in NumPy (`dense_mirror`) with the hits' payloads read after. A batch's cuts on the
creation time are planned here (`created_until`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

import qdrant_edge as qe
import structlog

from pcm_common.runtime.telemetry import MIRROR_POINTS
from pcm_common.stores.qdrant.common import DENSE, dense_of
from pcm_common.stores.qdrant.edge import created_until
from pcm_common.stores.qdrant.edge.dense_mirror import MIRRORED, DenseMirror
from pcm_common.stores.qdrant.edge.query import (
    DIALECT,
    batch_request,
    hit_cosines,
    selector,
    to_edge_filter,
)
from pcm_common.stores.qdrant.edge.reads import EdgeReads
from pcm_common.stores.qdrant.edge.shard import timed
from pcm_common.stores.qdrant.query import RRF_K, build, plan_search
from pcm_common.stores.vectors import (
    Filter,
    ScoredPoint,
    SearchQuery,
    SparseVec,
    only_fields,
    payload_matches,
)

log = structlog.get_logger("vectors")


def _scored(
    hits: list[Any],
    cosines: dict[Any, float] | None,
    payloads: dict[str, dict[str, Any]] | None,
    with_vectors: bool,
) -> list[ScoredPoint]:
    """The engine's hits as the port's points; `cosines` (a hybrid search's): reported as
    the scores, the fused scores kept; `payloads`: read after the query (a hit without one
    was deleted meanwhile), else each hit's own."""
    out = []
    for h in hits:
        pid = str(h.id)
        if payloads is not None and pid not in payloads:
            continue
        point = ScoredPoint(
            id=pid,
            score=float(h.score),
            payload=payloads[pid] if payloads is not None else dict(h.payload or {}),
            # A list of Python floats per point only when the caller asked for them.
            vector=dense_of(h.vector) if with_vectors else None,
        )
        if cosines is not None:
            # Fused scores are rank-based: report the cosine as the score (thresholds
            # keep their meaning whatever the ranking signal) and keep the fused one.
            point.fused = point.score
            point.score = cosines.get(h.id, 0.0)
        out.append(point)
    return out


class EdgeSearch(EdgeReads):
    """Searches (module docstring)."""

    async def search(
        self,
        tenant: str,
        vector: list[float],
        *,
        limit: int,
        flt: Filter | None = None,
        sparse: SparseVec | None = None,
        with_vectors: bool = False,
        fusion_k: int = RRF_K,
        prefetch: int | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        if limit <= 0:
            return []
        plan = plan_search(vector, sparse, limit=limit, fusion_k=fusion_k, prefetch=prefetch)
        # With the cache on, payloads come from `_payloads` after the query (most are
        # cached); without it, from the query itself.
        cached = self._cache.enabled
        request = build(
            plan,
            DIALECT,
            to_edge_filter(tenant, flt),
            payload=False if cached else selector(fields),
            vectors=[DENSE] if with_vectors else False,
        )
        dense_q, hybrid = plan.dense, plan.hybrid

        Found = tuple[list[Any], dict[Any, float], dict[str, dict[str, Any]] | None]

        def run(shard: qe.EdgeShard) -> Found:
            hits = shard.query(request)
            cosines = hit_cosines(shard, dense_q, hits) if hybrid else {}
            # Read in the same call: a point deleted after the query is simply not found.
            payloads = (
                self._payloads(shard, [str(h.id) for h in hits], fields)[0] if cached else None
            )
            return hits, cosines, payloads

        hits, cosines, payloads = await self._run(lambda: self._read(run, "search"))
        return _scored(hits, cosines if hybrid else None, payloads, with_vectors)

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        """The port's batch search; a `created_until` is asked by calendar keys first
        where the dense mirror does not hold the tenant: a range costs the engine a check
        of every point of an unindexed segment (`created_until`)."""
        return await created_until.search_many(
            queries,
            fields,
            cheap_ranges=self._mirror_takes,
            run=lambda batch, asked: self._search_batch(batch, asked, concurrency),
        )

    async def _search_batch(
        self, queries: Sequence[SearchQuery], fields: Sequence[str] | None, concurrency: int
    ) -> list[list[ScoredPoint]]:
        """One `query_batch` for all `queries` (one pass over the segments, one worker
        thread hop); `fields` go to the engine as a payload selector: turning unread
        payload fields into Python objects was most of a family search's cost
        (docs/decisions/0043-edge-payload-reads.md)."""
        if not queries:
            return []
        mirrored = await self._mirrored(queries)
        if mirrored:
            rest = [n for n in range(len(queries)) if n not in mirrored]
            out = dict(
                zip(
                    rest, await self._search_engine([queries[n] for n in rest], fields), strict=True
                )
            )
            out.update(await self._search_mirror({n: queries[n] for n in mirrored}, fields))
            return [out[n] for n in range(len(queries))]
        return await self._search_engine(queries, fields)

    async def _search_engine(
        self, queries: Sequence[SearchQuery], fields: Sequence[str] | None
    ) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        batch = batch_request(queries, selector(fields))
        results = await self._run(lambda: self._read(lambda s: s.query_batch(batch), "search_many"))
        return [
            [
                ScoredPoint(
                    id=str(h.id),
                    score=float(h.score),
                    payload=dict(h.payload or {}),
                    vector=dense_of(h.vector) if q.with_vectors else None,
                )
                for h in hits
                if q.keeps(h.score)
            ]
            if q.limit > 0
            else []
            for q, hits in zip(queries, results, strict=True)
        ]

    # ---- the dense mirror (`dense_mirror`) -------------------------------------------

    def _mirror_takes(self, tenant: str | None) -> bool:
        """Whether the mirror answers `tenant`'s batch searches (None: a tenant not yet
        seen): a range on `created_ts` costs it a column comparison, where the engine
        checks it on every point of an unindexed segment."""
        return self._mirror.enabled and tenant not in self._unmirrored

    async def _mirrored(self, queries: Sequence[SearchQuery]) -> set[int]:
        """Which of `queries` the mirror answers (loading their tenants first)."""
        if not self._mirror.enabled:
            return set()
        fit = [
            n
            for n, q in enumerate(queries)
            if q.limit > 0
            and not q.with_vectors
            and self._mirror_takes(q.tenant)
            and DenseMirror.answers(q.flt)
        ]
        for tenant in {queries[n].tenant for n in fit} - self._mirror.tenants():
            await self._run(functools.partial(self._load_mirror, tenant))
        covered = self._mirror.tenants()
        MIRROR_POINTS.set(len(self._mirror))
        return {n for n in fit if queries[n].tenant in covered}

    def _load_mirror(self, tenant: str) -> None:
        """Copy `tenant` into the mirror from the engine, page by page, under the write
        lock so that no write falls between the read and the copy; one that would not fit
        is not read at all."""
        with self._gate.enter(), self._write_lock:
            if self._mirror.covers(tenant) or tenant in self._unmirrored:
                return
            shard = timed(self._open(), "mirror_load")
            everything = to_edge_filter(tenant, None)
            size = int(shard.count(qe.CountRequest(exact=True, filter=everything)))
            ok = size <= self._mirror.room() and self._mirror.load(
                tenant, self._pages(shard, everything)
            )
            if not ok:
                self._unmirrored.add(tenant)
            log.info("edge_mirror_loaded", tenant=tenant, points=size, mirrored=ok)

    def _pages(
        self, shard: qe.EdgeShard, flt: qe.Filter
    ) -> Iterator[tuple[str, list[float], dict[str, Any]]]:
        """Every point of `flt` with its dense vector and mirrored fields."""
        offset: Any = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=1024,
                    filter=flt,
                    with_payload=selector(sorted(MIRRORED)),
                    with_vector=[DENSE],
                )
            )
            for r in records:
                yield str(r.id), dense_of(r.vector) or [0.0] * self.dim, dict(r.payload or {})
            if offset is None:
                return

    async def _search_mirror(
        self, queries: dict[int, SearchQuery], fields: Sequence[str] | None
    ) -> dict[int, list[ScoredPoint]]:
        """`queries` answered by the mirror (the engine answers those whose tenant left it
        meanwhile), their hits' payloads read as `get` reads them (cache first). The
        payloads are read after the search: a hit deleted, moved to another tenant or
        changed out of the filter in between is left out, as if searched after."""
        order = list(queries)
        found = await self._run(lambda: self._mirror.search([queries[n] for n in order]))
        out: dict[int, list[ScoredPoint]] = {}
        left = [n for n, hits in zip(order, found, strict=True) if hits is None]
        if left:
            redone = await self._search_engine([queries[n] for n in left], fields)
            out.update(zip(left, redone, strict=True))
        ids = list(dict.fromkeys(i for hits in found if hits for i, _ in hits))
        want = fields is None or bool(fields)
        payloads: dict[str, dict[str, Any]] = {}
        if want and ids:
            asked = None if fields is None else sorted({"tenant", *fields, *MIRRORED})
            payloads = await self._run(
                lambda: self._read(lambda s: self._payloads(s, ids, asked)[0], "search_many:mirror")
            )
        for n, hits in zip(order, found, strict=True):
            if hits is None:
                continue
            q = queries[n]
            if not want:
                out[n] = [ScoredPoint(id=i, score=sc, payload={}) for i, sc in hits if q.keeps(sc)]
                continue
            out[n] = [
                ScoredPoint(id=i, score=sc, payload=dict(only_fields(payload, fields)))
                for i, sc in hits
                if q.keeps(sc)
                and (payload := payloads.get(i)) is not None
                and payload.get("tenant") == q.tenant
                and (q.flt is None or payload_matches(q.flt, payload))
            ]
        return out
