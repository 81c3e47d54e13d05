"""Vector store adapter over Qdrant Edge (`qdrant_edge.EdgeShard`), the embedded default.

Facts about qdrant-edge-py 0.9 this relies on (checked against the installed build):

- `EdgeShard.create` fails on a directory that already holds segments and `load` fails on
  a missing one, so opening picks one by the presence of `edge_config.json`. `load` with a
  config checks it against the stored segments (a dimension mismatch raises).
- One shard per process *and* per machine: the WAL is file-locked, so a second `load` of
  the same path (same or another process) fails with "Can't init WAL: WouldBlock".
- With the WAL on (default) an `update` survives a process crash once it returns; `flush`
  (~50 ms) is only needed before `close`.
- The shard is usable from several threads at once (queries, updates and `optimize` ran
  concurrently without error), and nothing indexes on its own: HNSW is built only by
  `optimize()`, which this adapter runs in a background thread after enough writes, or
  with `optimize_in_child` in a child process on a copy (`edge.optimize`): it holds the
  interpreter lock.
- `flush` then a file copy of the shard directory gives a shard another process can
  `load` (its own WAL lock), and two shards at different paths open in one process.
- `MatchValue(True)` is read as the integer 1 and never matches a stored bool; a
  `numpy.bool_` is read as a bool, so bool equality goes through `numpy.bool_`.
- A top-level query filter also applies to prefetches; we set it on both anyway.
- Returned ids are `uuid.UUID`; stored dense vectors come back L2-normalised (cosine).
- Turning a payload into Python objects is most of a read's cost (~40-75 us a point), so
  searches and `get` take payloads from `payload_cache` where it has them. Some floats come
  back one unit in the last place off what was written, so the cache keeps only what the
  engine returned and a write drops the points it touches.
- With the WAL locked to this process, every write passes through this adapter, so it
  keeps who owns each point (`owners`): the ownership check before a payload write or a
  delete asks the engine only about ids it has not written or checked.
"""

from __future__ import annotations

import json
import os
import threading

import qdrant_edge as qe

from pcm_common.stores.qdrant.edge.moving import EdgeMoving
from pcm_common.stores.qdrant.edge.pagination import EdgePagination
from pcm_common.stores.qdrant.edge.search import EdgeSearch
from pcm_common.stores.qdrant.edge.shard import STORE_META
from pcm_common.stores.qdrant.edge.writes import EdgeWrites
from pcm_common.stores.vectors import Capabilities


class EdgeVectorStore(EdgeWrites, EdgeSearch, EdgePagination, EdgeMoving):
    """In-process Qdrant Edge shard at `path`.

    Calls run in worker threads (`asyncio.to_thread`) so the event loop never blocks on the
    engine. Reads run concurrently; writes are serialised by a lock so that the ownership
    check in `set_payload`/`delete` and the write that follows are atomic. HNSW is built
    by `optimize()`, triggered in the background every `optimize_after` written points.
    """

    # ---- port -----------------------------------------------------------------------

    def capabilities(self, tenant: str | None = None) -> Capabilities:
        """Ranges are cheap where the dense mirror answers the tenant; indexing while an
        HNSW build runs."""
        return Capabilities(cheap_ranges=self._mirror_takes(tenant), indexing=self._indexing())

    async def ensure_collection(self) -> None:
        await self._run(self._open)

    async def embedding_model(self) -> str | None:
        """Kept in `STORE_META` inside the shard directory (copied and removed with it)."""
        return await self._run(lambda: self._read(lambda _: self._recorded_model(), "meta"))

    def _recorded_model(self) -> str | None:
        meta_path = self.path / STORE_META
        if not meta_path.exists():
            return None
        try:
            recorded = json.loads(meta_path.read_text()).get("embedding_model")
        except (ValueError, AttributeError) as exc:
            raise RuntimeError(f"{meta_path} is not PCM's store record: {exc}") from exc
        return recorded if isinstance(recorded, str) else None

    async def claim_embedding_model(self, model: str) -> str | None:
        def claim(_: qe.EdgeShard) -> str | None:
            recorded = self._recorded_model()
            if recorded is None:
                meta_path = self.path / STORE_META
                tmp = meta_path.with_name(meta_path.name + ".tmp")
                with tmp.open("w") as f:
                    json.dump({"embedding_model": model}, f)
                    f.flush()
                    os.fsync(f.fileno())  # renamed only once on disk: never an empty record
                tmp.replace(meta_path)
            return recorded

        # Under the write lock, in the order every write takes them (gate, then lock).
        return await self._run(lambda: self._write(claim, "meta"))

    async def close(self) -> None:
        await self._run(self._close_sync)

    def _close_sync(self) -> None:
        # Waits for running calls (including a background optimize), then flushes and
        # releases the WAL lock so the path can be opened again.
        self._gate.drain()
        # A build on a copy runs outside the gate: let it see the close and drop its copy.
        opt = self._optimizer
        if opt is not None and opt is not threading.current_thread() and opt.is_alive():
            opt.join()
        with self._open_lock, self._write_lock:
            self._forget_learnt()
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None
