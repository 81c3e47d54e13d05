"""The near-duplicate lookup of a write: for each new item, the nearest stored memory of
its owner group that states the same figures (`plan.Twin`), whether it is the same event
being `plan_writes`' call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pcm_common.domain import visibility
from pcm_common.domain.figures import FIGURES_KEY, figures_key, same_figures
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery, VectorStore
from pcm_ingest.plan import Twin

# What is read of the search's hits: whole payloads (~30 fields turned into Python
# objects) for hits that are nearly never a twin.
_TWIN_FIELDS = ("figures", "text")
# Hits asked of the first search: room for memories stored before `figures_key` existed,
# which match whatever their figures.
_TWIN_HITS = 4


class TwinFinder:
    def __init__(self, vectors: VectorStore, min_cos: float, lookups: int) -> None:
        self.vectors = vectors
        self.min_cos = min_cos
        self.lookups = lookups  # searches in flight, for stores that search one at a time

    async def nearest(
        self,
        tenant: str,
        owners: Mapping[int, Mapping[str, Any]],
        vectors: Mapping[int, list[float]],
        figures: Mapping[int, list[str]],
    ) -> dict[int, Twin | None]:
        """For each item (by its index; `owners` holds its owner fields), the nearest
        active or archived memory of its group stating the same figures at or above
        `min_cos`, all looked up as one batch of searches.

        The search filters on the figures' keyword (`figures_key`), so it scores only the
        memories that could be the same event
        (docs/decisions/0009-near-duplicate-figures-key.md). Memories stored before the
        keyword existed have none and stay candidates; when all the hits are such memories
        with other figures, the search is asked again of keyed memories alone."""
        order = list(owners)

        def query(i: int, legacy: bool) -> SearchQuery:
            key = {FIGURES_KEY: figures_key(figures[i])}
            flt = Filter(
                # Archived too: a repeat of a demoted memory brings it back (as an exact
                # copy does), instead of storing the same event twice.
                must={"state": ["active", "archived"], **visibility.peers(owners[i])},
                should=[key, {FIGURES_KEY: None}] if legacy else [key],
                # A distilled fact is derived: a raw statement is stored beside it.
                must_not={"kind": "fact"},
            )
            limit = _TWIN_HITS if legacy else 1
            return SearchQuery(tenant, vectors[i], limit=limit, flt=flt, min_score=self.min_cos)

        found = await self._search([query(i, True) for i in order])
        nearest: dict[int, ScoredPoint | None] = {}
        again: list[int] = []  # items whose hits were all legacy ones
        for i, hits in zip(order, found, strict=True):
            same = next(
                (h for h in hits if same_figures(h.payload.get("figures", []), figures[i])), None
            )
            nearest[i] = same
            if same is None and len(hits) >= _TWIN_HITS:
                again.append(i)
        if again:
            redone = await self._search([query(i, False) for i in again])
            for i, hits in zip(again, redone, strict=True):
                nearest[i] = hits[0] if hits else None
        return {i: _as_twin(p) for i, p in nearest.items()}

    async def _search(self, queries: Sequence[SearchQuery]) -> list[list[ScoredPoint]]:
        return await self.vectors.search_many(
            queries, fields=_TWIN_FIELDS, concurrency=self.lookups
        )


def _as_twin(point: ScoredPoint | None) -> Twin | None:
    if point is None:
        return None
    return Twin(point.id, point.score, str(point.payload.get("text", "")))
