"""Reads by id on Qdrant Edge: ownership checks (`owners` first, then the engine) and
payloads (`payload_cache` first, then the engine), `get` and `tenants_of`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import qdrant_edge as qe

from pcm_common.stores.qdrant.common import DENSE, dense_of, is_uuid
from pcm_common.stores.qdrant.edge.base import EdgeBase
from pcm_common.stores.qdrant.edge.query import selector
from pcm_common.stores.vectors import ScoredPoint, only_fields


class EdgeReads(EdgeBase):
    """Reads by id (`get`, `tenants_of`) and the ownership checks writes make."""

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        valid = list(dict.fromkeys(str(uuid.UUID(i)) for i in ids if is_uuid(i)))
        if not valid:
            return {}
        payloads, _ = await self._run(
            lambda: self._read(lambda s: self._payloads(s, valid, ["tenant"]), "tenants_of")
        )
        return {i: str(p.get("tenant")) for i, p in payloads.items()}

    def _owned(
        self,
        shard: qe.EdgeShard,
        tenant: str,
        ids: Sequence[str],
        vectors: bool,
        *,
        fields: Sequence[str] | None = None,
        writing: bool = False,
    ) -> list[ScoredPoint]:
        """The points of `ids` that belong to `tenant`, in the order asked, with `fields`
        of their payloads and the tenant (empty `fields`: an ownership check; `writing`:
        made under the write lock, before a write)."""
        valid = list(dict.fromkeys(str(uuid.UUID(i)) for i in ids if is_uuid(i)))
        if not valid:
            return []
        if fields is not None and not fields and not vectors:
            found = self._owned_ids(shard, tenant, valid, writing)
            return [ScoredPoint(id=i, score=0.0, payload={}) for i in valid if i in found]
        asked = None if fields is None else ["tenant", *fields]
        payloads, dense = self._payloads(shard, valid, asked, vectors=vectors)
        return [
            ScoredPoint(id=i, score=0.0, payload=payloads[i], vector=dense.get(i))
            for i in valid
            if i in payloads and payloads[i].get("tenant") == tenant and (not vectors or i in dense)
        ]

    def _owned_ids(
        self, shard: qe.EdgeShard, tenant: str, ids: list[str], writing: bool
    ) -> set[str]:
        """Those of `ids` (canonical) that `tenant` owns: known ones from `_owners`, the
        rest from the engine, which filters them by tenant without reading a payload
        (docs/decisions/0043-edge-payload-reads.md); what the engine says
        is remembered when `writing` (a read outside the write lock could race a delete)."""
        live = self._live(shard)
        mine, unknown = self._owners.split(tenant, ids) if live else (set(), ids)
        if not unknown:
            return mine
        request = qe.ScrollRequest(
            limit=len(unknown),
            filter=qe.Filter(
                must=[
                    qe.FieldCondition(key="tenant", match=qe.MatchValue(tenant)),
                    qe.HasIdCondition(set(unknown)),
                ]
            ),
            with_payload=False,
            with_vector=False,
        )
        found = {str(r.id) for r in shard.scroll(request)[0]}
        if live and writing:
            self._owners.remember((i, tenant) for i in found)
        return mine | found

    def _payloads(
        self,
        shard: qe.EdgeShard,
        ids: Sequence[str],
        fields: Sequence[str] | None = None,
        *,
        vectors: bool = False,
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[float] | None]]:
        """The payloads of those `ids` (canonical) that exist, cut to `fields`, from the
        cache where it has them and the rest from the engine; with `vectors`, their dense
        vectors too. A `fields` read of a miss asks the engine for just those fields
        (cheaper to convert); what the engine returned is kept in the cache as read."""
        found, pending = self._cache.lookup(ids, fields)
        fetched: dict[str, dict[str, Any]] = {}
        dense: dict[str, list[float] | None] = {}
        try:
            # With vectors, one call for every id, cached or not: a second call for the
            # vectors cost more than converting a few payloads again (these reads are of
            # 1-10 points: a graph link's, a judged memory, the top recalled).
            ask: list[qe.PointId] = [i for i in ids if vectors or i in pending.ids]
            if ask:
                records = shard.retrieve(
                    ask,
                    with_payload=selector(fields),
                    with_vector=[DENSE] if vectors else False,
                )
                for r in records:
                    pid = str(r.id)
                    if vectors:
                        dense[pid] = dense_of(r.vector)
                    if pid in pending.ids:
                        fetched[pid] = dict(r.payload or {})
        finally:
            self._cache.fill(pending, fetched, fields)
        # Copies: the fetched dicts themselves are the cache's now.
        found.update((i, dict(p)) for i, p in fetched.items())
        return found, dense

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        points = await self._run(
            lambda: self._read(
                lambda s: self._owned(s, tenant, ids, with_vectors, fields=fields), "get"
            )
        )
        if fields is not None and "tenant" not in fields:
            for p in points:  # read for the ownership check only
                p.payload = only_fields(p.payload, fields)
        return points
