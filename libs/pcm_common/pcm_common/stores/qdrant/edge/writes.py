"""Writes on Qdrant Edge: upsert, payload patches and deletes, each under the write lock
with its ownership check, applied to the owners, the dense mirror and the payload cache in
the same order as to the engine."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import qdrant_edge as qe

from pcm_common.stores.qdrant.common import DENSE, SPARSE, is_uuid
from pcm_common.stores.qdrant.edge import time_keys
from pcm_common.stores.qdrant.edge.optimizer import EdgeOptimizer
from pcm_common.stores.qdrant.edge.reads import EdgeReads
from pcm_common.stores.vectors import VectorPoint, reject_tenant_moves

# Patches per worker-thread call of set_payload_many (see there).
WRITE_CHUNK = 8
# set_payload_many's writes: which patches were applied, and the grouped writes made.
_Patched = tuple[list[bool], list[tuple[list["qe.PointId"], dict[str, Any]]]]


class EdgeWrites(EdgeReads, EdgeOptimizer):
    """Writes (module docstring)."""

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        edge_points = []
        for p in points:
            if not is_uuid(p.id):
                raise ValueError(f"point id must be a UUID string: {p.id!r}")
            if len(p.vector) != self.dim:
                raise ValueError(f"vector of {p.id} has dim {len(p.vector)}, want {self.dim}")
            if "tenant" not in p.payload:
                raise ValueError(f"payload of {p.id} has no tenant")
            vec: dict[str, Any] = {DENSE: [float(x) for x in p.vector]}
            if p.sparse is not None and p.sparse.indices:
                vec[SPARSE] = qe.SparseVector(list(p.sparse.indices), list(p.sparse.values))
            # The calendar keys its searches plan with (`time_keys`), kept from the payload.
            edge_points.append(qe.Point(p.id, vec, time_keys.stamped(dict(p.payload))))

        owned = [(str(uuid.UUID(p.id)), str(p.payload["tenant"])) for p in points]

        def op(shard: qe.EdgeShard) -> None:
            shard.update(qe.UpdateOperation.upsert_points(edge_points))
            if self._live(shard):
                self._owners.remember(owned)
                self._to_mirror(
                    lambda: self._mirror.put(
                        (i, t, p.vector, p.payload) for (i, t), p in zip(owned, points, strict=True)
                    )
                )
            self._maybe_optimize(len(edge_points))

        written = [i for i, _ in owned]
        await self._run(lambda: self._write(op, "upsert", lambda _: self._cache.drop(written)))

    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        (done,) = await self.set_payload_many(tenant, [(point_id, patch)])
        return done

    async def set_payload_many(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        """One ownership read per `WRITE_CHUNK` patches and the writes of those patches in
        one worker-thread call: the consumers mark every memory of a batch, and a thread
        hop plus a read per memory was most of what a mark cost. Longer lists take one
        call per chunk: Qdrant Edge's calls hold the interpreter lock for their whole
        duration, and one long call stalls the recalls being served
        (docs/decisions/0010-edge-write-chunks.md)."""
        reject_tenant_moves(tenant, patches)
        # A new `created_at` brings its calendar keys (`time_keys`).
        patches = [(i, time_keys.stamped(p) if "created_at" in p else p) for i, p in patches]
        out: list[bool] = []
        for start in range(0, len(patches), WRITE_CHUNK):
            out += await self._set_payload_chunk(tenant, patches[start : start + WRITE_CHUNK])
        return out

    async def _set_payload_chunk(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        def op(shard: qe.EdgeShard) -> _Patched:
            owned = {
                p.id
                for p in self._owned(
                    shard, tenant, [i for i, _ in patches], False, fields=(), writing=True
                )
            }
            mine = [is_uuid(i) and str(uuid.UUID(i)) in owned for i, _ in patches]
            # Written by id: the ownership read above and these writes hold the write lock,
            # and no other process can open the shard, so nothing moves in between
            # (docs/decisions/0007-edge-ownership-record.md).
            todo = [(str(uuid.UUID(i)), p) for (i, p), ok in zip(patches, mine, strict=True) if ok]
            groups = _grouped(todo)
            live = self._live(shard)
            for ids, patch in groups:
                shard.update(qe.UpdateOperation.set_payload(ids, dict(patch)))
                if live:
                    self._to_mirror(lambda: self._mirror.patch([str(i) for i in ids], patch))  # noqa: B023
            return mine, groups

        def cached(out: _Patched) -> None:
            self._cache.drop(str(i) for ids, _ in out[1] for i in ids)

        mine, _ = await self._run(lambda: self._write(op, "set_payload", cached))
        return mine

    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        def op(shard: qe.EdgeShard) -> list[str]:
            owned = [p.id for p in self._owned(shard, tenant, ids, False, fields=(), writing=True)]
            if not owned:
                return []
            guard = qe.Filter(
                must=[
                    qe.HasIdCondition(set(owned)),
                    qe.FieldCondition(key="tenant", match=qe.MatchValue(tenant)),
                ]
            )
            shard.update(qe.UpdateOperation.delete_points_by_filter(guard))
            if self._live(shard):
                self._owners.forget(owned)
                self._to_mirror(lambda: self._mirror.remove(owned))
            return owned

        return len(await self._run(lambda: self._write(op, "delete", self._cache.drop)))


def _grouped(
    patches: Sequence[tuple[str, dict[str, Any]]],
) -> list[tuple[list[qe.PointId], dict[str, Any]]]:
    """`patches` as (ids, patch) writes: equal patches of distinct points in one write (a
    consumer marks a whole batch with the same flag). A point patched twice keeps its
    order: then every patch is its own write."""
    ids = [i for i, _ in patches]
    if len(set(ids)) != len(ids):
        return [([i], p) for i, p in patches]
    groups: dict[str, tuple[list[qe.PointId], dict[str, Any]]] = {}
    alone: list[tuple[list[qe.PointId], dict[str, Any]]] = []
    for point_id, patch in patches:
        try:  # JSON tells 1 from 1.0 and true from 1: equal keys, equal writes
            key = json.dumps(patch, sort_keys=True)
        except (TypeError, ValueError):
            alone.append(([point_id], patch))
            continue
        groups.setdefault(key, ([], patch))[0].append(point_id)
    return [*groups.values(), *alone]
