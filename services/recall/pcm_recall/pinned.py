"""Per-tenant cache of pinned memories, kept in process and dropped on `pcm.memory.changed`
so the asker slot costs no store round trip on the hot path.

The cache holds every active pinned memory of the tenant (up to `PINNED_SCAN`); each
request then keeps those its own visibility admits, so a project's guardrails never reach
another project's or another user's prompt, and the `limit` left is chosen by precedence,
not by the order the store happened to return."""

from __future__ import annotations

from typing import Any

from pcm_common.messaging.events import MemoryChanged
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorStore, payload_matches

log = get_logger("recall.pinned")

# Pinned memories read per tenant: guardrails are few; past this only the first ones in
# the store's order are considered, and a warning says so.
PINNED_SCAN = 1000
_PAGE = 250
_SCOPE_ORDER = {"project": 0, "workspace": 1, "global": 2}
_IMPORTANCE_ORDER = {"high": 0, "normal": 1, "low": 2}


def precedence(payload: dict[str, Any]) -> tuple[int, int, float, str]:
    """Sort key of a pinned memory in the asker slot: the most specific scope first (a
    project's rule before its workspace's before the global ones), then importance, then
    the newest; the id makes the order total."""
    return (
        _SCOPE_ORDER.get(str(payload.get("scope")), 3),
        _IMPORTANCE_ORDER.get(str(payload.get("importance")), 1),
        -float(payload.get("created_ts") or 0.0),
        str(payload.get("id", "")),
    )


class PinnedCache:
    def __init__(self, vectors: VectorStore, limit: int, scan: int = PINNED_SCAN) -> None:
        self.vectors = vectors
        self.limit = limit
        self.scan = scan
        self._cache: dict[str, list[ScoredPoint]] = {}
        # Bumped by every invalidation: a read that started before one is not cached, so a
        # change landing mid-read cannot leave the old pins in place.
        self._generation: dict[str, int] = {}

    async def get(self, tenant: str, visible: Filter) -> list[ScoredPoint]:
        """The tenant's pinned memories that `visible` (the request's scope filter) admits,
        at most `limit`, by `precedence`."""
        pins = await self._tenant_pins(tenant)
        mine = [p for p in pins if payload_matches(visible, p.payload)]
        mine.sort(key=lambda p: precedence(p.payload))
        return mine[: self.limit]

    async def _tenant_pins(self, tenant: str) -> list[ScoredPoint]:
        cached = self._cache.get(tenant)
        if cached is not None:
            return cached
        generation = self._generation.get(tenant, 0)
        flt = Filter(must={"pinned": True, "state": "active"})
        pins: list[ScoredPoint] = []
        offset: str | None = None
        while len(pins) < self.scan:
            page, offset = await self.vectors.scroll(
                tenant, flt=flt, limit=min(_PAGE, self.scan - len(pins)), offset=offset
            )
            pins.extend(page)
            if offset is None:
                break
        if offset is not None:
            log.warning("pinned_scan_capped", tenant=tenant, read=len(pins), cap=self.scan)
        if self._generation.get(tenant, 0) == generation:
            self._cache[tenant] = pins
        return pins

    def invalidate(self, tenant: str) -> None:
        self._generation[tenant] = self._generation.get(tenant, 0) + 1
        self._cache.pop(tenant, None)

    async def on_changed(self, event: MemoryChanged) -> None:
        if event.change == "repeated":
            return  # a repeat changes no pin and no text
        self.invalidate(event.tenant)
