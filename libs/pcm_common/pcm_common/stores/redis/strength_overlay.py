"""Strength write-back overlay: a `VectorStore` decorator that keeps memories' strength
updates in Redis and folds them into the payloads later.

Why: a recall's side effects update the strength of ~115 memories (k=50: the recalled
ones and their associates). In Qdrant Edge each payload write of a point still in an
indexed segment copies it into the plain appendable one, holding the interpreter lock, and
searches then scan those points without the index (docs/decisions/0006-strength-overlay.md).
Here a strength update is one Redis HSET per call instead, and the vector
store keeps its indexed layout.

How it stays exact: every write of strength passes through this object, and every read
that returns the `strength` field is merged with the overlay (one HMGET per call), so
readers see the newest strength whichever store holds it. Writes:

- `set_payload(_many)`: the `strength` of a patch goes to the overlay (for points of the
  tenant only), the rest of the patch to the payload as before;
- `upsert`: the upserted payload is the point's whole state (its writer read the merged
  view), so the point's overlay entry is dropped;
- `delete`: the points' entries are dropped;
- `fold_strengths(tenant)` (the sweeper's `strength_fold` job): writes the entries into
  the payloads and drops each one only if it still holds what was folded, so an update
  racing the fold stays in the overlay.

One hash per tenant (`keys.strength`, memory id -> the strength as JSON): a
tenant's reads look in its own hash only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.qdrant.common import canonical_id
from pcm_common.stores.redis import Fields, keys, scripts
from pcm_common.stores.vectors import (
    Capabilities,
    Filter,
    ScoredPoint,
    SearchQuery,
    SparseVec,
    VectorPoint,
    VectorStore,
    reject_tenant_moves,
)

log = get_logger("strength_overlay")

FIELD = "strength"
FOLD_BATCH = 256  # entries folded per store call


def _wants_strength(fields: Sequence[str] | None) -> bool:
    return fields is None or FIELD in fields


class StrengthOverlayStore(VectorStore):
    """`inner` with strength updates kept in `redis` until folded (module docstring)."""

    def __init__(
        self, inner: VectorStore, redis: Redis, *, prefix: str = keys.STRENGTH_PREFIX
    ) -> None:
        self.inner = inner
        self.redis = redis
        self.prefix = prefix

    def _key(self, tenant: str) -> str:
        return keys.strength(tenant, self.prefix)

    # ---- merging reads ---------------------------------------------------------------

    async def _merge(self, tenant: str, points: Sequence[ScoredPoint]) -> None:
        """Set the payload strength of `points` to their overlay entry where one is."""
        if not points:
            return
        ids = [p.id for p in points]
        values = await self.redis.hmget(self._key(tenant), ids)
        for p, raw in zip(points, values, strict=True):
            if raw is not None:
                p.payload[FIELD] = json.loads(raw)

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        points = await self.inner.get(tenant, ids, with_vectors=with_vectors, fields=fields)
        if _wants_strength(fields):
            await self._merge(tenant, points)
        return points

    async def search(
        self,
        tenant: str,
        vector: list[float],
        *,
        limit: int,
        flt: Filter | None = None,
        sparse: SparseVec | None = None,
        with_vectors: bool = False,
        fusion_k: int = 60,
        prefetch: int | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        points = await self.inner.search(
            tenant,
            vector,
            limit=limit,
            flt=flt,
            sparse=sparse,
            with_vectors=with_vectors,
            fusion_k=fusion_k,
            prefetch=prefetch,
            fields=fields,
        )
        if _wants_strength(fields):
            await self._merge(tenant, points)
        return points

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        found = await self.inner.search_many(queries, fields=fields, concurrency=concurrency)
        if _wants_strength(fields):
            by_tenant: dict[str, list[ScoredPoint]] = {}
            for q, points in zip(queries, found, strict=True):
                by_tenant.setdefault(q.tenant, []).extend(points)
            for tenant, points in by_tenant.items():
                await self._merge(tenant, points)
        return found

    async def scroll(
        self,
        tenant: str,
        *,
        flt: Filter | None = None,
        limit: int = 100,
        offset: str | None = None,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> tuple[list[ScoredPoint], str | None]:
        points, nxt = await self.inner.scroll(
            tenant, flt=flt, limit=limit, offset=offset, with_vectors=with_vectors, fields=fields
        )
        if _wants_strength(fields):
            await self._merge(tenant, points)
        return points, nxt

    async def scroll_many(
        self,
        tenant: str,
        filters: Sequence[Filter],
        *,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[list[ScoredPoint]]:
        pages = await self.inner.scroll_many(tenant, filters, limit=limit, fields=fields)
        if _wants_strength(fields):
            await self._merge(tenant, [p for page in pages for p in page])
        return pages

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        return await self.inner.timelines(tenant, filters, key=key, limit=limit)

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        return await self.inner.count(tenant, flt)

    # ---- writes ----------------------------------------------------------------------

    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        (done,) = await self.set_payload_many(tenant, [(point_id, patch)])
        return done

    async def set_payload_many(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        """The patches' strengths into the overlay, the rest of each patch into the
        payload; one result per patch (False: not a point of this tenant)."""
        reject_tenant_moves(tenant, patches)
        # A strength of None removes the field, as a payload write does: the payload's job.
        rest = [
            (i, p if p.get(FIELD, 0) is None else {k: v for k, v in p.items() if k != FIELD})
            for i, p in patches
        ]
        with_rest = [n for n, (_, r) in enumerate(rest) if r]
        done: dict[int, bool] = {}
        if with_rest:
            wrote = await self.inner.set_payload_many(tenant, [rest[n] for n in with_rest])
            done.update(zip(with_rest, wrote, strict=True))
        unknown = [n for n in range(len(patches)) if n not in done]
        if unknown:
            # Strength-only patches: ownership from one read of ids, no payloads.
            found = await self.inner.get(tenant, [patches[n][0] for n in unknown], fields=())
            owned = {p.id for p in found}
            done.update((n, canonical_id(patches[n][0]) in owned) for n in unknown)
        entries: dict[str, str | None] = {}  # in order: a point's last patch wins
        for n, (pid, patch) in enumerate(patches):
            if done[n] and FIELD in patch:
                value = patch[FIELD]
                entries[canonical_id(pid)] = None if value is None else json.dumps(value)
        dropped = [i for i, v in entries.items() if v is None]
        kept: Fields = {i: v for i, v in entries.items() if v is not None}
        if dropped or kept:
            async with self.redis.pipeline(transaction=True) as pipe:
                if dropped:
                    pipe.hdel(self._key(tenant), *dropped)
                if kept:
                    pipe.hset(self._key(tenant), mapping=kept)
                await pipe.execute()
        return [done[n] for n in range(len(patches))]

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        await self.inner.upsert(points)
        by_tenant: dict[str, list[str]] = {}
        for p in points:
            by_tenant.setdefault(str(p.payload.get("tenant")), []).append(canonical_id(p.id))
        for tenant, ids in by_tenant.items():
            await self.redis.hdel(self._key(tenant), *ids)

    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        n = await self.inner.delete(tenant, ids)
        if ids:
            await self.redis.hdel(self._key(tenant), *[canonical_id(i) for i in ids])
        return n

    async def fold_strengths(self, tenant: str) -> int:
        """Write the tenant's overlay entries into the payloads, `FOLD_BATCH` at a time,
        and drop those that still hold what was written. Returns how many were folded
        (entries of points deleted meanwhile are dropped without a write)."""
        key = self._key(tenant)
        folded = 0
        cursor = 0
        while True:
            cursor, chunk = await self.redis.hscan(key, cursor, count=FOLD_BATCH)
            if chunk:
                assert isinstance(chunk, dict)
                items = [(_text(k), _text(v)) for k, v in chunk.items()]
                wrote = await self.inner.set_payload_many(
                    tenant, [(mid, {FIELD: json.loads(v)}) for mid, v in items]
                )
                flat = [x for mid, v in items for x in (mid, v)]
                await self.redis.eval(scripts.DROP_IF_SAME, 1, key, *flat)
                folded += sum(wrote)
            if cursor == 0:
                break
        if folded:
            log.info("strengths_folded", tenant=tenant, count=folded)
        return folded

    # ---- the rest is the inner store's ----------------------------------------------

    async def embedding_model(self) -> str | None:
        return await self.inner.embedding_model()

    async def claim_embedding_model(self, model: str) -> str | None:
        return await self.inner.claim_embedding_model(model)

    async def sample(self, n: int) -> list[ScoredPoint]:
        return await self.inner.sample(n)

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        return await self.inner.tenants_of(ids)

    async def ensure_collection(self) -> None:
        await self.inner.ensure_collection()

    @property
    def backend(self) -> str:
        return self.inner.backend

    def capabilities(self, tenant: str | None = None) -> Capabilities:
        return self.inner.capabilities(tenant)

    async def close(self) -> None:
        await self.inner.close()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
