"""Per-tenant cache of pinned memories, kept in process and dropped on `pcm.memory.changed`
so the asker slot costs no store round trip on the hot path."""

from __future__ import annotations

from pcm_common.events import MemoryChanged
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorStore


class PinnedCache:
    def __init__(self, vectors: VectorStore, limit: int) -> None:
        self.vectors = vectors
        self.limit = limit
        self._cache: dict[str, list[ScoredPoint]] = {}

    async def get(self, tenant: str) -> list[ScoredPoint]:
        cached = self._cache.get(tenant)
        if cached is None:
            flt = Filter(must={"pinned": True, "state": "active"})
            cached, _ = await self.vectors.scroll(tenant, flt=flt, limit=self.limit)
            self._cache[tenant] = cached
        return cached

    def invalidate(self, tenant: str) -> None:
        self._cache.pop(tenant, None)

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change == "repeated":
            return  # a repeat changes no pin and no text
        self.invalidate(event.tenant)
