"""When and where Qdrant Edge's HNSW build runs: in a background thread after enough
writes, or on an explicit `optimize()`; in process, or on a copy in a child process
(`optimize`) whose journalled writes are replayed before it replaces the shard."""

from __future__ import annotations

import shutil
import subprocess
import threading

import qdrant_edge as qe
import structlog

from pcm_common.runtime.telemetry import CALLER
from pcm_common.stores.qdrant.edge import optimize as edge_optimize
from pcm_common.stores.qdrant.edge.base import EdgeBase
from pcm_common.stores.qdrant.edge.shard import STORE_META

log = structlog.get_logger("vectors")


class EdgeOptimizer(EdgeBase):
    """The HNSW build (module docstring)."""

    def _indexing(self) -> bool:
        """Whether a build is running (`capabilities`)."""
        return self._optimize_lock.locked()

    async def optimize(self) -> bool:
        """Build HNSW / merge segments now (the sweeper may call this on a schedule)."""
        return await self._run(self._optimize_sync)

    def _maybe_optimize(self, written: int) -> None:
        """Start a background HNSW build once enough points were written (call holding
        the write lock). Edge keeps serving reads and writes while it runs."""
        if self._journal is not None:
            return  # a build is under way (or these are its writes being replayed)
        self._since_optimize += written
        if self._since_optimize < self.optimize_after:
            return
        if self._optimizer is not None and self._optimizer.is_alive():
            return
        self._since_optimize = 0
        self._optimizer = threading.Thread(
            target=self._optimize_sync, name="edge-optimize", daemon=False
        )
        self._optimizer.start()

    def _optimize_sync(self) -> bool:
        CALLER.set("optimizer")  # its own thread, or a worker call's copy of the context
        try:
            with self._optimize_lock:
                if self.optimize_in_child:
                    try:
                        return self._optimize_in_child()
                    except (OSError, subprocess.SubprocessError) as exc:
                        # No child could do it (no interpreter to spawn, a crash, a
                        # timeout): build here, stalling the process as before.
                        err = getattr(exc, "stderr", None) or b""
                        log.warning(
                            "edge_child_optimize_failed",
                            error=repr(exc)[:300],
                            stderr=bytes(err)[-500:].decode(errors="replace"),
                        )
                return self._read(lambda s: s.optimize(), "optimize")
        except RuntimeError:  # closed meanwhile: nothing to do
            return False

    def _optimize_in_child(self) -> bool:
        """The HNSW build on a copy in a child process (`edge.optimize`): the copy is made
        with writes held (reads go on), writes made during the build are journalled and
        applied to the copy, which then replaces the shard while no call runs."""
        with self._gate.enter(), self._write_lock:
            self._open().flush()
            copy = edge_optimize.copy_shard(self.path)
            self._journal = []
        try:
            edge_optimize.optimize_copy(
                copy,
                self.dim,
                self.max_segment_kb,
                self.optimize_timeout_s,
                self.indexing_threshold_kb,
            )
            with self._gate.exclusive(), self._write_lock:
                # Still set while replaying: the replayed upserts must not start a build.
                journal = self._journal or []
                if self._gate.closing:
                    return False  # closed meanwhile: the copy is dropped below
                fresh = qe.EdgeShard.load(str(copy), self._config())
                try:
                    for fn in journal:
                        fn(fresh)
                    fresh.flush()
                finally:
                    fresh.close()
                with self._open_lock:
                    if self._shard is not None:
                        self._shard.flush()
                        self._shard.close()
                        self._shard = None
                    if (self.path / STORE_META).exists():  # recorded during the build
                        shutil.copy2(self.path / STORE_META, copy / STORE_META)
                    edge_optimize.swap(self.path, copy)
                if self._diverged:
                    self._forget_learnt()
                self._open()
                log.info("edge_optimized_in_child", path=str(self.path), replayed=len(journal))
            return True
        finally:
            self._journal = None
            self._diverged = False
            if copy.exists():
                shutil.rmtree(copy, ignore_errors=True)
