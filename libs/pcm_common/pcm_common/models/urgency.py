"""The query's urgency from its meaning (`pcm_common.domain.affect.urgency`): its embedding
against the embeddings of the urgent and calm descriptions (`URGENT_PROTOTYPES`,
`CALM_PROTOTYPES`), embedded once per process with the query embedder, so that a recall
pays a dozen dot products and no model call."""

from __future__ import annotations

import asyncio

import numpy as np

from pcm_common.domain.affect import CALM_PROTOTYPES, URGENT_PROTOTYPES, prototype_margin
from pcm_common.ports import QueryEmbedder


class UrgencyPrototypes:
    def __init__(self, embedder: QueryEmbedder) -> None:
        self.embedder = embedder
        self._vectors: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = asyncio.Lock()

    async def _load(self) -> tuple[np.ndarray, np.ndarray]:
        if self._vectors is None:
            async with self._lock:
                if self._vectors is None:
                    texts = [*URGENT_PROTOTYPES, *CALM_PROTOTYPES]
                    rows = [await self.embedder.embed_query(t) for t in texts]
                    m = _unit(np.asarray(rows, dtype=np.float32))
                    n = len(URGENT_PROTOTYPES)
                    self._vectors = (m[:n], m[n:])
        return self._vectors

    async def margin(self, qvec: list[float]) -> float:
        """Best cosine to an urgent description minus best to a calm one."""
        urgent, calm = await self._load()
        q = _unit(np.asarray([qvec], dtype=np.float32))[0]
        return prototype_margin((urgent @ q).tolist(), (calm @ q).tolist())


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)
