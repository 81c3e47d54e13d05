"""The Qdrant Edge adapter's core (`EdgeBase`): its state, opening the shard, and running
calls on it in worker threads: reads concurrently, writes one at a time under the write
lock (journalled while a copy is optimized elsewhere). The adapter's parts (`reads`,
`writes`, `search`, `pagination`, `optimizer`) build on it and `store.EdgeVectorStore`
puts them together."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe
import structlog

from pcm_common.stores.qdrant.edge import optimize as edge_optimize
from pcm_common.stores.qdrant.edge.dense_mirror import DenseMirror
from pcm_common.stores.qdrant.edge.owners import Owners
from pcm_common.stores.qdrant.edge.payload_cache import PayloadCache
from pcm_common.stores.qdrant.edge.shard import Gate, create_payload_indexes, edge_config, timed
from pcm_common.stores.vectors import VectorStore

T = TypeVar("T")
log = structlog.get_logger("vectors")


class EdgeBase(VectorStore):
    """The state and plumbing every part of the adapter uses (module docstring)."""

    def __init__(
        self,
        path: Path,
        dim: int = 384,
        *,
        optimize_after: int = 5000,
        max_segment_kb: int = 0,
        indexing_threshold_kb: int = 0,
        optimize_in_child: bool = False,
        optimize_timeout_s: float = 1800.0,
        payload_cache: int = 0,
        dense_mirror: int = 0,
    ) -> None:
        self.path = Path(path)
        self.dim = dim
        self.optimize_after = optimize_after
        self.max_segment_kb = max_segment_kb
        self.indexing_threshold_kb = indexing_threshold_kb
        self.optimize_in_child = optimize_in_child
        self.optimize_timeout_s = optimize_timeout_s
        # The writes made while a copy is optimized elsewhere, applied to it before it
        # replaces the shard (`edge.optimize`); None when no copy is being optimized.
        self._journal: list[Callable[[qe.EdgeShard], Any]] | None = None
        self._shard: qe.EdgeShard | None = None
        # Who owns each point written or checked (`owners`): ownership checks without
        # an engine call. Changed under the write lock only, for the live shard only.
        self._owners = Owners()
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._gate = Gate()
        self._since_optimize = 0
        self._optimizer: threading.Thread | None = None
        # One optimize at a time (background trigger vs. an explicit optimize() call).
        self._optimize_lock = threading.Lock()
        # Exact because every write of the shard passes through this object (`payload_cache`).
        self._cache = PayloadCache(payload_cache)
        # The dense vectors and filter fields of the tenants searched so far, searched in
        # NumPy without the interpreter lock (`dense_mirror`); exact for the same reason,
        # changed under the write lock for the live shard only, like `_owners`.
        self._mirror = DenseMirror(dim, dense_mirror)
        # Tenants the mirror could not take (too many points): searched by the engine.
        self._unmirrored: set[str] = set()
        # A write failed while a copy was being optimized: part of it may be in the live
        # shard but not in the journal, so what was learnt from the live shard since (the
        # mirror, the cache, the owners) is forgotten when the copy replaces it.
        self._diverged = False

    # ---- plumbing -------------------------------------------------------------------

    def _config(self) -> qe.EdgeConfig:
        return edge_config(self.dim, self.max_segment_kb, self.indexing_threshold_kb)

    def _open(self) -> qe.EdgeShard:
        with self._open_lock:
            if self._shard is None:
                if self._gate.closing:
                    raise RuntimeError("vector store is closed")
                edge_optimize.recover(self.path)
                if (self.path / "edge_config.json").exists():
                    self._shard = qe.EdgeShard.load(str(self.path), self._config())
                else:
                    self.path.mkdir(parents=True, exist_ok=True)
                    self._shard = qe.EdgeShard.create(str(self.path), self._config())
                create_payload_indexes(self._shard)
            return self._shard

    def _read(self, fn: Callable[[qe.EdgeShard], T], op: str) -> T:
        """`fn` on the shard; its engine calls are counted as made for `op` (`Timed`)."""
        with self._gate.enter():
            return fn(timed(self._open(), op))

    def _write(
        self,
        fn: Callable[[qe.EdgeShard], T],
        op: str,
        cached: Callable[[T], None] | None = None,
    ) -> T:
        """`fn` on the shard under the write lock, then `cached` (the payload cache's side
        of the write, with `fn`'s result) in the same order; only `fn` is journalled for a
        copy being optimized. Counted as `op`, like `_read`."""
        with self._gate.enter(), self._write_lock:
            try:
                out = fn(timed(self._open(), op))
            except BaseException:
                # Part of a write may have landed: forget what it touched.
                self._forget_learnt()
                if self._journal is not None:
                    self._diverged = True
                raise
            if self._journal is not None:
                self._journal.append(fn)
            if cached is not None:
                cached(out)
            return out

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.to_thread(fn)

    def _live(self, shard: qe.EdgeShard) -> bool:
        """Whether `shard` is the one this adapter serves (not a copy being brought up to
        date after an optimize elsewhere, whose writes replay the live shard's). Calls
        get the live shard wrapped in `Timed`; replays get the copy itself."""
        return getattr(shard, "shard", shard) is self._shard

    def _forget_learnt(self) -> None:
        """Forget what was learnt from the shard (after a write that may have half landed)."""
        self._cache.clear()
        self._owners.clear()
        self._mirror.clear()
        self._unmirrored.clear()

    def _to_mirror(self, change: Callable[[], None]) -> None:
        """A write's change to the mirror, after the engine took the write: a failure here
        must not fail the write, so the mirror is emptied instead (it reloads)."""
        try:
            change()
        except Exception as exc:
            log.warning("edge_mirror_reset", error=repr(exc)[:300])
            self._mirror.clear()
