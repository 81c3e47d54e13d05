"""The near-duplicate lookup of a write: for each new item, the nearest stored memory of
its owner group that states the same figures (`plan.Twin`), whether it is the same event
being `plan_writes`' call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pcm_common.domain import visibility
from pcm_common.stores.vectors import DuplicateQuery, Filter, ScoredPoint, VectorStore
from pcm_ingest.plan import Twin


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
        `min_cos`, all looked up as one batch (the store plans the searches:
        `VectorStore.near_duplicates`)."""
        order = list(owners)
        queries = [
            DuplicateQuery(
                tenant,
                vectors[i],
                figures[i],
                Filter(
                    # Archived too: a repeat of a demoted memory brings it back (as an
                    # exact copy does), instead of storing the same event twice.
                    must={"state": ["active", "archived"], **visibility.peers(owners[i])},
                    # A distilled fact is derived: a raw statement is stored beside it.
                    must_not={"kind": "fact"},
                ),
                self.min_cos,
            )
            for i in order
        ]
        found = await self.vectors.near_duplicates(
            queries, fields=("text",), concurrency=self.lookups
        )
        return {i: _as_twin(p) for i, p in zip(order, found, strict=True)}


def _as_twin(point: ScoredPoint | None) -> Twin | None:
    if point is None:
        return None
    return Twin(point.id, point.score, str(point.payload.get("text", "")))
