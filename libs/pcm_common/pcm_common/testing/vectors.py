"""`MemoryVectorStore`: the vector-store port in a dict, for unit tests.

What it holds to (as the Qdrant adapters do, `tests/unit/test_vector_contract.py` checks it
against Qdrant Edge): point ids are UUIDs, returned canonical (lower-case, hyphenated);
every call sees one tenant's points only; filters mean what `domain.filters.payload_matches`
says; scores are cosines of L2-normalised vectors, best first; scroll pages go in id order,
the next offset being the id of the first point of the next page; payload writes merge
top-level keys and never move a point to another tenant. Hybrid (sparse) search is not
implemented: a test that needs it runs against a real adapter."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pcm_common.stores.qdrant.common import canonical_id, is_uuid
from pcm_common.stores.vectors import (
    Filter,
    ScoredPoint,
    SparseVec,
    VectorPoint,
    VectorStore,
    only_fields,
    payload_matches,
    reject_tenant_moves,
)


@dataclass
class _Stored:
    vector: list[float]  # L2-normalised, as Qdrant's cosine distance keeps it
    payload: dict[str, Any]
    sparse: SparseVec | None


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [float(x) / norm for x in vector] if norm else [0.0 for _ in vector]


class MemoryVectorStore(VectorStore):
    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim  # None: any length, as long as a search compares equal lengths
        self._points: dict[str, _Stored] = {}
        self._model: str | None = None

    # ---- reads ----------------------------------------------------------------------

    def _mine(self, tenant: str, flt: Filter | None) -> list[tuple[str, _Stored]]:
        """The tenant's points matching `flt`, in id order."""
        return [
            (pid, p)
            for pid, p in sorted(self._points.items())
            if p.payload.get("tenant") == tenant
            and (flt is None or payload_matches(flt, p.payload))
        ]

    @staticmethod
    def _point(
        pid: str, p: _Stored, score: float, with_vectors: bool, fields: Sequence[str] | None
    ) -> ScoredPoint:
        return ScoredPoint(
            id=pid,
            score=score,
            payload=copy.deepcopy(only_fields(p.payload, fields)),
            vector=list(p.vector) if with_vectors else None,
        )

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        asked = dict.fromkeys(canonical_id(i) for i in ids if is_uuid(i))
        return [
            self._point(pid, self._points[pid], 0.0, with_vectors, fields)
            for pid in asked
            if pid in self._points and self._points[pid].payload.get("tenant") == tenant
        ]

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
        if sparse is not None:
            raise NotImplementedError(
                "MemoryVectorStore does not fuse sparse (hybrid) searches: test hybrid "
                "ranking against a Qdrant adapter"
            )
        query = _unit(vector)
        scored = [
            (sum(a * b for a, b in zip(query, p.vector, strict=True)), pid, p)
            for pid, p in self._mine(tenant, flt)
        ]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [
            self._point(pid, p, s, with_vectors, fields) for s, pid, p in scored[: max(0, limit)]
        ]

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
        if offset is not None and not is_uuid(offset):
            raise ValueError(f"scroll offset must be a point id: {offset!r}")
        start = canonical_id(offset) if offset is not None else None
        rows = [(pid, p) for pid, p in self._mine(tenant, flt) if start is None or pid >= start]
        page = [self._point(pid, p, 0.0, with_vectors, fields) for pid, p in rows[:limit]]
        return page, (rows[limit][0] if len(rows) > limit else None)

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        return len(self._mine(tenant, flt))

    async def sample(self, n: int) -> list[ScoredPoint]:
        return [self._point(pid, p, 0.0, True, None) for pid, p in sorted(self._points.items())[:n]]

    # ---- writes ---------------------------------------------------------------------

    async def ensure_collection(self) -> None:
        return None

    async def embedding_model(self) -> str | None:
        return self._model

    async def claim_embedding_model(self, model: str) -> str | None:
        before = self._model
        self._model = before or model
        return before

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        for p in points:  # checked first, as an adapter refuses the whole call
            if not is_uuid(p.id):
                raise ValueError(f"point id must be a UUID string: {p.id!r}")
            if self.dim is not None and len(p.vector) != self.dim:
                raise ValueError(f"vector of {p.id} has dim {len(p.vector)}, want {self.dim}")
            if "tenant" not in p.payload:
                raise ValueError(f"payload of {p.id} has no tenant")
        for p in points:
            self._points[canonical_id(p.id)] = _Stored(
                _unit(p.vector), copy.deepcopy(p.payload), p.sparse
            )

    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        reject_tenant_moves(tenant, [(point_id, patch)])
        stored = self._points.get(canonical_id(point_id)) if is_uuid(point_id) else None
        if stored is None or stored.payload.get("tenant") != tenant:
            return False
        stored.payload.update(copy.deepcopy(patch))
        return True

    async def set_payload_many(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        reject_tenant_moves(tenant, patches)  # all checked before any is written
        return [await self.set_payload(tenant, pid, patch) for pid, patch in patches]

    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        gone = 0
        for pid in dict.fromkeys(canonical_id(i) for i in ids if is_uuid(i)):
            stored = self._points.get(pid)
            if stored is not None and stored.payload.get("tenant") == tenant:
                del self._points[pid]
                gone += 1
        return gone

    async def close(self) -> None:
        return None
