"""The vector store services hold (`Resources.vectors`), which passes every call to the
adapter and, while a re-embedding job builds a store of the new model beside it
(`pcm_common.data.reembed`), makes each write there too: an upsert with the new model's
vector of the point's text, a payload change or a delete as is. So a memory written or
changed while the job runs is in the new store when reads switch to it, whether the job
has copied it yet or not.

Reads stay with the adapter until the switch, which replaces the adapter's contents where
it stands (`VectorStore.replace_with`): services keep this object (some hold it from their
start), so nothing needs to be handed round again.

While a job runs, writes and the job's copying of a page take `lock` in turn: a page is read
again and written under it, so a payload change made between the job's first read and its
write is never lost (the change either lands before the fresh read or finds the point
copied). Without a job the lock is not taken and a write costs what it did.

The switch (`switch`, under `lock`) keeps dual writes on until the stores have changed
places: a write that came while dual writes were off but before the swap would take the
no-lock path, land in the old store only, and be lost when the new one replaced it (a PATCH
answered 200 whose change was gone after the switch). So a write arriving during the switch
waits for the lock, and finds the adapter holding the new store when it gets it; an upsert
then writes the new model's vectors, which it made for the store beside.

A writer embeds before it upserts (the ingest writer checks twins and assigns episodes in
between), so an upsert that comes just after the switch may carry the old model's vectors:
for `AFTER_SWITCH_S` after it, an upsert's points are embedded again with the new model
(the same vector where the writer used it already; for a model of another dimension, a
write that would otherwise fail).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pcm_common.stores.vectors import (
    Capabilities,
    Filter,
    ScoredPoint,
    SearchQuery,
    SparseVec,
    VectorPoint,
    VectorStore,
)

if TYPE_CHECKING:
    from pcm_common.models.embeddings import Embedder

# How long after a switch upserts are embedded again with the new model (module docstring):
# far longer than a writer's embed-to-upsert gap.
AFTER_SWITCH_S = 30.0


@dataclass
class Beside:
    """The store a job fills and the model whose vectors it holds."""

    store: VectorStore
    embedder: Embedder
    # Set by `switch` once `store` has replaced the adapter's contents: the adapter holds
    # this model's vectors from then on.
    switched: bool = False


class DualWriteStore(VectorStore):
    """`inner`, with writes made in `beside` too while it is set (module docstring)."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.beside_store: Beside | None = None
        self.lock = asyncio.Lock()
        # The model the last switch moved to, and when (monotonic seconds).
        self._switched: tuple[Embedder, float] | None = None

    def start_dual_writes(self, store: VectorStore, embedder: Embedder) -> None:
        self.beside_store = Beside(store, embedder)

    def stop_dual_writes(self) -> None:
        self.beside_store = None

    async def switch(self) -> None:
        """The store beside replaces the adapter's contents (`VectorStore.replace_with`)
        and dual writes end; call holding `lock`. `beside_store` stays set until the swap
        is made, so that no write takes the no-lock path to the old store meanwhile
        (module docstring)."""
        side = self.beside_store
        if side is None:
            raise RuntimeError("no store beside to switch to")
        await self.inner.replace_with(side.store)
        side.switched = True
        self._switched = (side.embedder, time.monotonic())
        self.beside_store = None

    # ---- writes: both stores while a job runs ----------------------------------------

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        side = self.beside_store
        if side is None:
            after = self._switched
            if after is None or time.monotonic() - after[1] > AFTER_SWITCH_S:
                return await self.inner.upsert(points)
            # Just switched: these may have been embedded with the old model.
            return await self.inner.upsert(await _embedded(after[0], points))
        # Embedded before taking the lock: other writes do not wait for the model.
        vecs = await side.embedder.embed([str(p.payload.get("text") or "") for p in points])
        fresh = [
            VectorPoint(p.id, v, p.payload, p.sparse) for p, v in zip(points, vecs, strict=True)
        ]
        async with self.lock:
            if side.switched:
                # The stores changed places while this waited: the adapter holds the new
                # model's vectors now, and `points` carry the old one's.
                return await self.inner.upsert(fresh)
            await self.inner.upsert(points)
            if self.beside_store is side:
                await side.store.upsert(fresh)

    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        return (await self.set_payload_many(tenant, [(point_id, patch)]))[0]

    async def set_payload_many(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        if self.beside_store is None:
            return await self.inner.set_payload_many(tenant, patches)
        async with self.lock:
            done = await self.inner.set_payload_many(tenant, patches)
            side = self.beside_store
            if side is not None:
                # A point not copied yet is absent there (False): the copy brings it.
                await side.store.set_payload_many(tenant, patches)
            return done

    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        if self.beside_store is None:
            return await self.inner.delete(tenant, ids)
        async with self.lock:
            n = await self.inner.delete(tenant, ids)
            side = self.beside_store
            if side is not None:
                await side.store.delete(tenant, ids)
            return n

    # ---- everything else is the adapter's --------------------------------------------

    async def ensure_collection(self) -> None:
        await self.inner.ensure_collection()

    async def embedding_model(self) -> str | None:
        return await self.inner.embedding_model()

    async def claim_embedding_model(self, model: str) -> str | None:
        return await self.inner.claim_embedding_model(model)

    async def sample(self, n: int) -> list[ScoredPoint]:
        return await self.inner.sample(n)

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        return await self.inner.tenants_of(ids)

    @property
    def backend(self) -> str:
        return self.inner.backend

    def capabilities(self, tenant: str | None = None) -> Capabilities:
        return self.inner.capabilities(tenant)

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        return await self.inner.get(tenant, ids, with_vectors=with_vectors, fields=fields)

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
        return await self.inner.search(
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

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        return await self.inner.search_many(queries, fields=fields, concurrency=concurrency)

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
        return await self.inner.scroll(
            tenant, flt=flt, limit=limit, offset=offset, with_vectors=with_vectors, fields=fields
        )

    async def pages(
        self,
        tenant: str,
        *,
        flt: Filter | None = None,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
        size: int = 256,
    ) -> AsyncIterator[list[ScoredPoint]]:
        async for page in self.inner.pages(
            tenant, flt=flt, with_vectors=with_vectors, fields=fields, size=size
        ):
            yield page

    async def scroll_many(
        self,
        tenant: str,
        filters: Sequence[Filter],
        *,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[list[ScoredPoint]]:
        return await self.inner.scroll_many(tenant, filters, limit=limit, fields=fields)

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        return await self.inner.timelines(tenant, filters, key=key, limit=limit)

    async def fold_strengths(self, tenant: str) -> int:
        return await self.inner.fold_strengths(tenant)

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        return await self.inner.count(tenant, flt)

    async def scroll_all(
        self, *, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        return await self.inner.scroll_all(limit=limit, offset=offset)

    def beside(self, name: str, dim: int) -> VectorStore:
        return self.inner.beside(name, dim)

    async def replace_with(self, other: VectorStore) -> None:
        await self.inner.replace_with(other)

    async def drop(self) -> None:
        await self.inner.drop()

    async def close(self) -> None:
        side, self.beside_store = self.beside_store, None
        if side is not None:
            await side.store.close()
        await self.inner.close()


async def _embedded(embedder: Embedder, points: Sequence[VectorPoint]) -> list[VectorPoint]:
    """`points` with `embedder`'s vectors of their texts."""
    vecs = await embedder.embed([str(p.payload.get("text") or "") for p in points])
    return [VectorPoint(p.id, v, p.payload, p.sparse) for p, v in zip(points, vecs, strict=True)]
