"""Moving an Edge store to another embedding model (`pcm_common.data.reembed`): a sibling
shard holds the new vectors while this one serves, then takes this one's place by the same
two renames the optimizer's swap makes (`edge.optimize.swap`; `recover`, run before every
open, completes or undoes a cut one)."""

from __future__ import annotations

import shutil

import qdrant_edge as qe

from pcm_common.stores.qdrant.common import is_uuid
from pcm_common.stores.qdrant.edge import optimize as edge_optimize
from pcm_common.stores.qdrant.edge.dense_mirror import DenseMirror
from pcm_common.stores.qdrant.edge.optimizer import EdgeOptimizer
from pcm_common.stores.qdrant.edge.pagination import stored
from pcm_common.stores.qdrant.edge.query import selector
from pcm_common.stores.vectors import ScoredPoint, VectorStore


class EdgeMoving(EdgeOptimizer):
    """`scroll_all`, `beside`, `replace_with` and `drop` of the port."""

    async def scroll_all(
        self, *, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        if offset is not None and not is_uuid(offset):
            raise ValueError(f"scroll offset must be a point id: {offset!r}")
        request = qe.ScrollRequest(
            offset=offset, limit=limit, with_payload=selector(None), with_vector=False
        )
        records, next_offset = await self._run(
            lambda: self._read(lambda s: s.scroll(request), "scroll_all")
        )
        return [stored(r, False) for r in records], (
            str(next_offset) if next_offset is not None else None
        )

    def beside(self, name: str, dim: int) -> VectorStore:
        # No payload cache or mirror: nothing searches it until it takes this one's place,
        # where this adapter's own serve it.
        return type(self)(
            edge_optimize.sibling(self.path, f".{name}"),
            dim,
            optimize_after=self.optimize_after,
            max_segment_kb=self.max_segment_kb,
            indexing_threshold_kb=self.indexing_threshold_kb,
            optimize_in_child=False,
            optimize_timeout_s=self.optimize_timeout_s,
        )

    async def replace_with(self, other: VectorStore) -> None:
        if not isinstance(other, EdgeMoving) or other.path.parent != self.path.parent:
            raise ValueError("an Edge store is replaced only by a store made beside it")
        await other.close()  # flushed, its WAL lock released

        def swap() -> None:
            # No build on a copy may swap its copy in after this (it would bring the old
            # vectors back), and no call runs while the shard is away.
            with self._optimize_lock, self._gate.exclusive(), self._write_lock:
                with self._open_lock:
                    if self._shard is not None:
                        self._shard.flush()
                        self._shard.close()
                        self._shard = None
                    edge_optimize.swap(self.path, other.path)
                    self.dim = other.dim
                    self._mirror = DenseMirror(other.dim, self._mirror.capacity)
                    self._forget_learnt()
                    self._since_optimize = 0
                self._open()

        await self._run(swap)

    async def drop(self) -> None:
        await self.close()
        await self._run(lambda: shutil.rmtree(self.path, ignore_errors=True))
