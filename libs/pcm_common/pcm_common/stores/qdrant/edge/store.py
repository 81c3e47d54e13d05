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

import asyncio
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import qdrant_edge as qe
import structlog

from pcm_common.runtime.telemetry import CALLER, MIRROR_POINTS, STORE_CALLS, STORE_SECONDS
from pcm_common.stores.qdrant.common import (
    DENSE,
    PREFETCH_FACTOR,
    PREFETCH_MIN,
    RRF_K,
    SPARSE,
    dense_of,
    is_uuid,
)
from pcm_common.stores.qdrant.edge import optimize as edge_optimize
from pcm_common.stores.qdrant.edge.dense_mirror import MIRRORED, DenseMirror
from pcm_common.stores.qdrant.edge.owners import Owners
from pcm_common.stores.qdrant.edge.payload_cache import PayloadCache
from pcm_common.stores.vectors import (
    BOOL_INDEXES,
    FLOAT_INDEXES,
    KEYWORD_INDEXES,
    Filter,
    ScoredPoint,
    SearchQuery,
    SparseVec,
    VectorPoint,
    VectorStore,
    only_fields,
    payload_matches,
    reject_tenant_moves,
)

T = TypeVar("T")
# The store's own facts (the embedding model of its vectors), inside the shard directory.
STORE_META = "pcm-store.json"
# Patches per worker-thread call of set_payload_many (see there).
WRITE_CHUNK = 8
# set_payload_many's writes: which patches were applied, and the grouped writes made.
_Patched = tuple[list[bool], list[tuple[list["qe.PointId"], dict[str, Any]]]]
log = structlog.get_logger("vectors")


def _match(key: str, value: Any) -> Any:
    """One equality / any-of condition on `key`."""
    if value is None:
        return qe.FieldCondition(key=key, is_empty=True)
    if isinstance(value, bool):
        # Python bools reach the engine as integers; numpy.bool_ reaches it as a bool.
        return qe.FieldCondition(key=key, match=qe.MatchValue(np.bool_(value)))  # type: ignore[arg-type]
    if isinstance(value, float):
        return qe.FieldCondition(key=key, range=qe.RangeFloat(gte=value, lte=value))
    if isinstance(value, (list, tuple, set, frozenset)):
        values = list(value)
        if not values:
            # "Any of nothing" matches nothing; an empty `should` would match everything.
            return qe.HasIdCondition(set())
        if all(isinstance(v, str) for v in values):
            return qe.FieldCondition(key=key, match=qe.MatchAny(values))
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return qe.FieldCondition(key=key, match=qe.MatchAny(values))
        return qe.Filter(should=[_match(key, v) for v in values])
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def to_edge_filter(tenant: str, flt: Filter | None) -> qe.Filter:
    """Port filter -> Edge filter, always conditioned on the tenant."""
    must: list[Any] = [qe.FieldCondition(key="tenant", match=qe.MatchValue(tenant))]
    must_not: list[Any] = []
    should: list[Any] = []
    if flt is not None:
        must += [_match(k, v) for k, v in flt.must.items()]
        must_not += [_match(k, v) for k, v in flt.must_not.items()]
        for key, (gte, lte) in flt.ranges.items():
            if gte is None and lte is None:
                continue
            must.append(qe.FieldCondition(key=key, range=qe.RangeFloat(gte=gte, lte=lte)))
        should = [qe.Filter(must=[_match(k, v) for k, v in g.items()]) for g in flt.should]
    # Nest the should-groups so "at least one" never combines oddly with the other parts.
    if should:
        must.append(qe.Filter(should=should))
    return qe.Filter(must=must, must_not=must_not or None)


def _selector(fields: Sequence[str] | None) -> Any:
    """The engine's payload selector for the port's `fields` (None: all; empty: none)."""
    if fields is None:
        return True
    return qe.PayloadSelector.Include(list(fields)) if fields else False


def edge_config(dim: int, max_segment_kb: int, indexing_threshold_kb: int = 0) -> qe.EdgeConfig:
    """The shard's configuration (also what the child optimizer opens a copy with); a size
    of 0 leaves that optimizer setting to Qdrant Edge."""
    max_segment = max_segment_kb if max_segment_kb > 0 else None
    threshold = indexing_threshold_kb if indexing_threshold_kb > 0 else None
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        # Qdrant's server defaults; full_scan_threshold is in KB of vectors.
        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
        optimizers=(
            qe.EdgeOptimizersConfig(max_segment_size=max_segment, indexing_threshold=threshold)
            if max_segment or threshold
            else None
        ),
    )


class _Gate:
    """Lets any number of calls run at once but lets `close` wait for them to finish
    (closing a shard under a running query would fail or crash the call), and lets the
    optimizer's swap run alone (`exclusive`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._paused = False
        self.closing = False

    @contextmanager
    def enter(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._paused or self.closing)
            if self.closing:
                raise RuntimeError("vector store is closed")
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """No call runs inside: new ones wait, running ones are waited for. Not to be
        entered from inside `enter` (it would wait for itself)."""
        with self._cond:
            self._cond.wait_for(lambda: not self._paused)
            self._paused = True
            self._cond.wait_for(lambda: self._active == 0)
        try:
            yield
        finally:
            with self._cond:
                self._paused = False
                self._cond.notify_all()

    def drain(self) -> None:
        with self._cond:
            self.closing = True
            self._cond.wait_for(lambda: self._active == 0)


class EdgeVectorStore(VectorStore):
    """In-process Qdrant Edge shard at `path`.

    Calls run in worker threads (`asyncio.to_thread`) so the event loop never blocks on the
    engine. Reads run concurrently; writes are serialised by a lock so that the ownership
    check in `set_payload`/`delete` and the write that follows are atomic. HNSW is built
    by `optimize()`, triggered in the background every `optimize_after` written points.
    """

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
        self._gate = _Gate()
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
                self._create_indexes(self._shard)
            return self._shard

    def _create_indexes(self, shard: qe.EdgeShard) -> None:
        existing = shard.info().payload_schema
        wanted: list[tuple[str, Any, qe.PayloadSchemaType]] = []
        for name in KEYWORD_INDEXES:
            # is_tenant lays segments out by tenant: every query filters on it.
            schema: Any = (
                qe.KeywordIndexParams(is_tenant=True)
                if name == "tenant"
                else qe.PayloadSchemaType.Keyword
            )
            wanted.append((name, schema, qe.PayloadSchemaType.Keyword))
        wanted += [(n, qe.PayloadSchemaType.Bool, qe.PayloadSchemaType.Bool) for n in BOOL_INDEXES]
        wanted += [
            (n, qe.PayloadSchemaType.Float, qe.PayloadSchemaType.Float) for n in FLOAT_INDEXES
        ]
        for name, schema, kind in wanted:
            info = existing.get(name)
            if info is None or info.data_type != kind:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))

    def _read(self, fn: Callable[[qe.EdgeShard], T], op: str) -> T:
        """`fn` on the shard; its engine calls are counted as made for `op` (`_Timed`)."""
        with self._gate.enter():
            return fn(_timed(self._open(), op))

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
                out = fn(_timed(self._open(), op))
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

    # ---- port -----------------------------------------------------------------------

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

    async def sample(self, n: int) -> list[ScoredPoint]:
        request = qe.ScrollRequest(
            limit=n,
            with_payload=qe.PayloadSelector.Include(["text"]),
            with_vector=[DENSE],
        )
        records, _ = await self._run(lambda: self._read(lambda s: s.scroll(request), "sample"))
        return [_stored(r, True) for r in records]

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        valid = list(dict.fromkeys(str(uuid.UUID(i)) for i in ids if is_uuid(i)))
        if not valid:
            return {}
        payloads, _ = await self._run(
            lambda: self._read(lambda s: self._payloads(s, valid, ["tenant"]), "tenants_of")
        )
        return {i: str(p.get("tenant")) for i, p in payloads.items()}

    @property
    def indexing(self) -> bool:
        return self._optimize_lock.locked()

    async def optimize(self) -> bool:
        """Build HNSW / merge segments now (the sweeper may call this on a schedule)."""
        return await self._run(self._optimize_sync)

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
            edge_points.append(qe.Point(p.id, vec, dict(p.payload)))

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

    def _owned(
        self,
        shard: qe.EdgeShard,
        tenant: str,
        ids: Sequence[str],
        vectors: bool,
        *,
        fields: Sequence[str] | None = None,
        writing: bool = False,
    ) -> list[ScoredPoint]:
        """The points of `ids` that belong to `tenant`, in the order asked, with `fields`
        of their payloads and the tenant (empty `fields`: an ownership check; `writing`:
        made under the write lock, before a write)."""
        valid = list(dict.fromkeys(str(uuid.UUID(i)) for i in ids if is_uuid(i)))
        if not valid:
            return []
        if fields is not None and not fields and not vectors:
            found = self._owned_ids(shard, tenant, valid, writing)
            return [ScoredPoint(id=i, score=0.0, payload={}) for i in valid if i in found]
        asked = None if fields is None else ["tenant", *fields]
        payloads, dense = self._payloads(shard, valid, asked, vectors=vectors)
        return [
            ScoredPoint(id=i, score=0.0, payload=payloads[i], vector=dense.get(i))
            for i in valid
            if i in payloads and payloads[i].get("tenant") == tenant and (not vectors or i in dense)
        ]

    def _live(self, shard: qe.EdgeShard) -> bool:
        """Whether `shard` is the one this adapter serves (not a copy being brought up to
        date after an optimize elsewhere, whose writes replay the live shard's). Calls
        get the live shard wrapped in `_Timed`; replays get the copy itself."""
        return getattr(shard, "shard", shard) is self._shard

    def _owned_ids(
        self, shard: qe.EdgeShard, tenant: str, ids: list[str], writing: bool
    ) -> set[str]:
        """Those of `ids` (canonical) that `tenant` owns: known ones from `_owners`, the
        rest from the engine, which filters them by tenant without reading a payload (50
        ids: 0.19 ms against 0.70 reading each one's tenant field); what the engine says
        is remembered when `writing` (a read outside the write lock could race a delete)."""
        live = self._live(shard)
        mine, unknown = self._owners.split(tenant, ids) if live else (set(), ids)
        if not unknown:
            return mine
        request = qe.ScrollRequest(
            limit=len(unknown),
            filter=qe.Filter(
                must=[
                    qe.FieldCondition(key="tenant", match=qe.MatchValue(tenant)),
                    qe.HasIdCondition(set(unknown)),
                ]
            ),
            with_payload=False,
            with_vector=False,
        )
        found = {str(r.id) for r in shard.scroll(request)[0]}
        if live and writing:
            self._owners.remember((i, tenant) for i in found)
        return mine | found

    def _payloads(
        self,
        shard: qe.EdgeShard,
        ids: Sequence[str],
        fields: Sequence[str] | None = None,
        *,
        vectors: bool = False,
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[float] | None]]:
        """The payloads of those `ids` (canonical) that exist, cut to `fields`, from the
        cache where it has them and the rest from the engine; with `vectors`, their dense
        vectors too. A `fields` read of a miss asks the engine for just those fields
        (cheaper to convert); what the engine returned is kept in the cache as read."""
        found, pending = self._cache.lookup(ids, fields)
        fetched: dict[str, dict[str, Any]] = {}
        dense: dict[str, list[float] | None] = {}
        try:
            # With vectors, one call for every id, cached or not: a second call for the
            # vectors cost more than converting a few payloads again (these reads are of
            # 1-10 points: a graph link's, a judged memory, the top recalled).
            ask: list[qe.PointId] = [i for i in ids if vectors or i in pending.ids]
            if ask:
                records = shard.retrieve(
                    ask,
                    with_payload=_selector(fields),
                    with_vector=[DENSE] if vectors else False,
                )
                for r in records:
                    pid = str(r.id)
                    if vectors:
                        dense[pid] = dense_of(r.vector)
                    if pid in pending.ids:
                        fetched[pid] = dict(r.payload or {})
        finally:
            self._cache.fill(pending, fetched, fields)
        # Copies: the fetched dicts themselves are the cache's now.
        found.update((i, dict(p)) for i, p in fetched.items())
        return found, dense

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        points = await self._run(
            lambda: self._read(
                lambda s: self._owned(s, tenant, ids, with_vectors, fields=fields), "get"
            )
        )
        if fields is not None and "tenant" not in fields:
            for p in points:  # read for the ownership check only
                p.payload = only_fields(p.payload, fields)
        return points

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
        duration, and one call writing a k=50 recall's ~115 strengths stalled the event
        loop, and the recalls it served (p50 35.6 -> 51.7 ms; 8 patches hold it ~1.4 ms)."""
        reject_tenant_moves(tenant, patches)
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
            # and no other process can open the shard, so nothing moves in between (a
            # filtered write per point, as before, cost ~60-190 us more per point).
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

    async def search(
        self,
        tenant: str,
        vector: list[float],
        *,
        limit: int,
        flt: Filter | None = None,
        sparse: SparseVec | None = None,
        with_vectors: bool = False,
        fusion_k: int = RRF_K,
        prefetch: int | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        if limit <= 0:
            return []
        edge_filter = to_edge_filter(tenant, flt)
        # With the cache on, payloads come from `_payloads` after the query (most are
        # cached); without it, from the query itself.
        cached = self._cache.enabled
        payload = False if cached else _selector(fields)
        dense_q = [float(x) for x in vector]
        hybrid = sparse is not None and bool(sparse.indices)
        if hybrid:
            assert sparse is not None
            depth = prefetch or max(PREFETCH_MIN, PREFETCH_FACTOR * limit)
            request = qe.QueryRequest(
                limit=limit,
                prefetches=[
                    qe.Prefetch(
                        limit=depth,
                        query=qe.Query.Nearest(dense_q, using=DENSE),
                        filter=edge_filter,
                    ),
                    qe.Prefetch(
                        limit=depth,
                        query=qe.Query.Nearest(
                            qe.SparseVector(list(sparse.indices), list(sparse.values)),
                            using=SPARSE,
                        ),
                        filter=edge_filter,
                    ),
                ],
                query=qe.Fusion.Rrf(k=fusion_k),  # type: ignore[arg-type]  # stub omits Rrf
                filter=edge_filter,
                with_payload=payload,
                with_vector=[DENSE] if with_vectors else False,
            )
        else:
            request = qe.QueryRequest(
                limit=limit,
                query=qe.Query.Nearest(dense_q, using=DENSE),
                filter=edge_filter,
                with_payload=payload,
                with_vector=[DENSE] if with_vectors else False,
            )

        Found = tuple[list[Any], dict[Any, float], dict[str, dict[str, Any]] | None]

        def run(shard: qe.EdgeShard) -> Found:
            hits = shard.query(request)
            cosines = _cosines(shard, dense_q, hits) if hybrid else {}
            # Read in the same call: a point deleted after the query is simply not found.
            payloads = (
                self._payloads(shard, [str(h.id) for h in hits], fields)[0] if cached else None
            )
            return hits, cosines, payloads

        hits, cosines, payloads = await self._run(lambda: self._read(run, "search"))
        out = []
        for h in hits:
            pid = str(h.id)
            if payloads is not None and pid not in payloads:
                continue
            point = ScoredPoint(
                id=pid,
                score=float(h.score),
                payload=payloads[pid] if payloads is not None else dict(h.payload or {}),
                # A list of Python floats per point only when the caller asked for them.
                vector=dense_of(h.vector) if with_vectors else None,
            )
            if hybrid:
                # Fused scores are rank-based: report the cosine as the score (thresholds
                # keep their meaning whatever the ranking signal) and keep the fused one.
                point.fused = point.score
                point.score = cosines.get(h.id, 0.0)
            out.append(point)
        return out

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        """One `query_batch` for all `queries` (one pass over the segments, one worker
        thread hop); `fields` go to the engine as a payload selector: turning unread
        payload fields into Python objects was most of a family search's cost (1.9 against
        0.4 ms for 12 hits at 10k memories)."""
        if not queries:
            return []
        mirrored = await self._mirrored(queries)
        if mirrored:
            rest = [n for n in range(len(queries)) if n not in mirrored]
            out = dict(
                zip(
                    rest, await self._search_engine([queries[n] for n in rest], fields), strict=True
                )
            )
            out.update(await self._search_mirror({n: queries[n] for n in mirrored}, fields))
            return [out[n] for n in range(len(queries))]
        return await self._search_engine(queries, fields)

    async def _search_engine(
        self, queries: Sequence[SearchQuery], fields: Sequence[str] | None
    ) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        payload = _selector(fields)
        requests = [
            qe.QueryRequest(
                limit=max(1, q.limit),
                query=qe.Query.Nearest([float(x) for x in q.vector], using=DENSE),
                filter=to_edge_filter(q.tenant, q.flt),
                with_payload=payload,
                with_vector=[DENSE] if q.with_vectors else False,
                # A hair below, so the engine's comparison never drops an equal score;
                # the exact cut is made below.
                score_threshold=None if q.min_score is None else q.min_score - 1e-6,
            )
            for q in queries
        ]
        batch = qe.QueryBatchRequest(requests)
        results = await self._run(lambda: self._read(lambda s: s.query_batch(batch), "search_many"))
        return [
            [
                ScoredPoint(
                    id=str(h.id),
                    score=float(h.score),
                    payload=dict(h.payload or {}),
                    vector=dense_of(h.vector) if q.with_vectors else None,
                )
                for h in hits
                if q.keeps(h.score)
            ]
            if q.limit > 0
            else []
            for q, hits in zip(queries, results, strict=True)
        ]

    # ---- the dense mirror (`dense_mirror`) -------------------------------------------

    def cheap_ranges(self, tenant: str) -> bool:
        """A range on `created_ts` costs the mirror a column comparison; the engine checks
        it on every point of an unindexed segment."""
        return self._mirror.enabled and tenant not in self._unmirrored

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

    async def _mirrored(self, queries: Sequence[SearchQuery]) -> set[int]:
        """Which of `queries` the mirror answers (loading their tenants first)."""
        if not self._mirror.enabled:
            return set()
        fit = [
            n
            for n, q in enumerate(queries)
            if q.limit > 0
            and not q.with_vectors
            and self.cheap_ranges(q.tenant)
            and DenseMirror.answers(q.flt)
        ]
        for tenant in {queries[n].tenant for n in fit} - self._mirror.tenants():
            await self._run(lambda tenant=tenant: self._load_mirror(tenant))  # type: ignore[misc]
        covered = self._mirror.tenants()
        MIRROR_POINTS.set(len(self._mirror))
        return {n for n in fit if queries[n].tenant in covered}

    def _load_mirror(self, tenant: str) -> None:
        """Copy `tenant` into the mirror from the engine, page by page, under the write
        lock so that no write falls between the read and the copy; one that would not fit
        is not read at all."""
        with self._gate.enter(), self._write_lock:
            if self._mirror.covers(tenant) or tenant in self._unmirrored:
                return
            shard = _timed(self._open(), "mirror_load")
            everything = to_edge_filter(tenant, None)
            size = int(shard.count(qe.CountRequest(exact=True, filter=everything)))
            ok = size <= self._mirror.room() and self._mirror.load(
                tenant, self._pages(shard, everything)
            )
            if not ok:
                self._unmirrored.add(tenant)
            log.info("edge_mirror_loaded", tenant=tenant, points=size, mirrored=ok)

    def _pages(
        self, shard: qe.EdgeShard, flt: qe.Filter
    ) -> Iterator[tuple[str, list[float], dict[str, Any]]]:
        """Every point of `flt` with its dense vector and mirrored fields."""
        offset: Any = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=1024,
                    filter=flt,
                    with_payload=_selector(sorted(MIRRORED)),
                    with_vector=[DENSE],
                )
            )
            for r in records:
                yield str(r.id), dense_of(r.vector) or [0.0] * self.dim, dict(r.payload or {})
            if offset is None:
                return

    async def _search_mirror(
        self, queries: dict[int, SearchQuery], fields: Sequence[str] | None
    ) -> dict[int, list[ScoredPoint]]:
        """`queries` answered by the mirror (the engine answers those whose tenant left it
        meanwhile), their hits' payloads read as `get` reads them (cache first). The
        payloads are read after the search: a hit deleted, moved to another tenant or
        changed out of the filter in between is left out, as if searched after."""
        order = list(queries)
        found = await self._run(lambda: self._mirror.search([queries[n] for n in order]))
        out: dict[int, list[ScoredPoint]] = {}
        left = [n for n, hits in zip(order, found, strict=True) if hits is None]
        if left:
            redone = await self._search_engine([queries[n] for n in left], fields)
            out.update(zip(left, redone, strict=True))
        ids = list(dict.fromkeys(i for hits in found if hits for i, _ in hits))
        want = fields is None or bool(fields)
        payloads: dict[str, dict[str, Any]] = {}
        if want and ids:
            asked = None if fields is None else sorted({"tenant", *fields, *MIRRORED})
            payloads = await self._run(
                lambda: self._read(lambda s: self._payloads(s, ids, asked)[0], "search_many:mirror")
            )
        for n, hits in zip(order, found, strict=True):
            if hits is None:
                continue
            q = queries[n]
            if not want:
                out[n] = [ScoredPoint(id=i, score=sc, payload={}) for i, sc in hits if q.keeps(sc)]
                continue
            out[n] = [
                ScoredPoint(id=i, score=sc, payload=dict(only_fields(payload, fields)))
                for i, sc in hits
                if q.keeps(sc)
                and (payload := payloads.get(i)) is not None
                and payload.get("tenant") == q.tenant
                and (q.flt is None or payload_matches(q.flt, payload))
            ]
        return out

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
        request = qe.ScrollRequest(
            offset=offset,
            limit=limit,
            filter=to_edge_filter(tenant, flt),
            with_payload=_selector(fields),
            with_vector=[DENSE] if with_vectors else False,
        )
        records, next_offset = await self._run(
            lambda: self._read(lambda s: s.scroll(request), "scroll")
        )
        points = [_stored(r, with_vectors) for r in records]
        return points, (str(next_offset) if next_offset is not None else None)

    async def scroll_many(
        self,
        tenant: str,
        filters: Sequence[Filter],
        *,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[list[ScoredPoint]]:
        """All the scrolls in one worker-thread hop. A recall's episode reads (up to 9 at
        k=50) were one hop each, run at once: on two cores their thread hand-offs and GIL
        contention cost more than the reads (10k memories: ~3 ms for 8 reads in a row,
        4-6 ms wall for each of them when overlapped)."""
        return await self._scroll_batch(
            tenant, filters, lambda r: _stored(r, False), limit=limit, payload=_selector(fields)
        )

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        """Ordered by the engine (`order_by` on `key`'s range index), ids and order values
        only, all the reads in one worker-thread hop."""
        return await self._scroll_batch(
            tenant,
            filters,
            lambda r: (str(r.id), float(r.order_value or 0.0)),
            limit=limit,
            payload=False,
            order_by=qe.OrderBy(key),
        )

    async def _scroll_batch(
        self,
        tenant: str,
        filters: Sequence[Filter],
        convert: Callable[[Any], T],
        *,
        limit: int,
        payload: Any,
        order_by: qe.OrderBy | None = None,
    ) -> list[list[T]]:
        """The first page of each filter's scroll, every record through `convert`, in one
        worker-thread hop (no vectors)."""
        requests = [
            qe.ScrollRequest(
                limit=limit,
                filter=to_edge_filter(tenant, f),
                with_payload=payload,
                with_vector=False,
                order_by=order_by,
            )
            for f in filters
        ]

        def read(shard: qe.EdgeShard) -> list[list[T]]:
            return [[convert(r) for r in shard.scroll(q)[0]] for q in requests]

        return await self._run(lambda: self._read(read, "scroll_many")) if requests else []

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        request = qe.CountRequest(exact=True, filter=to_edge_filter(tenant, flt))
        return int(await self._run(lambda: self._read(lambda s: s.count(request), "count")))

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


class _Timed:
    """The shard as one adapter call (`op`) uses it: each engine call's wall time is
    counted as `op:method` for the current caller (`telemetry.STORE_SECONDS`). Only the
    engine's own time: it holds the interpreter lock throughout, so this is time the rest
    of the process could not run, while the adapter's Python around it may wait for the
    lock (a wall clock around the whole adapter call counted those waits too)."""

    __slots__ = ("op", "shard")

    def __init__(self, shard: qe.EdgeShard, op: str) -> None:
        self.shard = shard
        self.op = op

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.shard, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                labels = (f"{self.op}:{name}", CALLER.get())
                STORE_SECONDS.labels(*labels).inc(time.perf_counter() - started)
                STORE_CALLS.labels(*labels).inc()

        return timed


def _timed(shard: qe.EdgeShard, op: str) -> qe.EdgeShard:
    return cast(qe.EdgeShard, _Timed(shard, op))


def _cosines(shard: qe.EdgeShard, query: list[float], hits: Sequence[Any]) -> dict[Any, float]:
    """The cosine of `query` to each hit's dense vector, scored by the engine over just
    those points. Returning the hits' vectors instead cost more: turning 100 vectors of 384
    floats into Python lists and taking the dots in NumPy was ~2.8 ms per recall at pool
    100, this second query ~0.9 ms (10k memories, session-7 machine)."""
    ids = {h.id for h in hits}
    if not ids:
        return {}
    request = qe.QueryRequest(
        limit=len(ids),
        query=qe.Query.Nearest(query, using=DENSE),
        filter=qe.Filter(must=[qe.HasIdCondition(ids)]),
        with_payload=False,
        with_vector=False,
    )
    return {h.id: float(h.score) for h in shard.query(request)}


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


def _stored(record: Any, with_vectors: bool) -> ScoredPoint:
    """A stored record (get, scroll) as a point of the port: no score."""
    return ScoredPoint(
        id=str(record.id),
        score=0.0,
        payload=dict(record.payload or {}),
        vector=dense_of(record.vector) if with_vectors else None,
    )
