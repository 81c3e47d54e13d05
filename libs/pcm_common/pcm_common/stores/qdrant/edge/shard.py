"""The shard itself, below the adapter: its configuration (also what the child optimizer
opens a copy with), its payload indexes, the gate that lets `close` and the optimizer's
swap wait for running calls, and the timing of each engine call."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import qdrant_edge as qe

from pcm_common.runtime.telemetry import CALLER, STORE_CALLS, STORE_SECONDS
from pcm_common.stores.qdrant.common import DENSE, SPARSE
from pcm_common.stores.qdrant.edge import time_keys
from pcm_common.stores.vectors import BOOL_INDEXES, FLOAT_INDEXES, KEYWORD_INDEXES

# The store's own facts (the embedding model of its vectors), inside the shard directory.
STORE_META = "pcm-store.json"


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


def create_payload_indexes(shard: qe.EdgeShard) -> None:
    """An index on every field a filter uses (`vectors.*_INDEXES`, and this adapter's
    `time_keys`), made where missing or of another type."""
    existing = shard.info().payload_schema
    wanted: list[tuple[str, Any, qe.PayloadSchemaType]] = []
    for name in (*KEYWORD_INDEXES, time_keys.FIELD):
        # is_tenant lays segments out by tenant: every query filters on it.
        schema: Any = (
            qe.KeywordIndexParams(is_tenant=True)
            if name == "tenant"
            else qe.PayloadSchemaType.Keyword
        )
        wanted.append((name, schema, qe.PayloadSchemaType.Keyword))
    wanted += [(n, qe.PayloadSchemaType.Bool, qe.PayloadSchemaType.Bool) for n in BOOL_INDEXES]
    wanted += [(n, qe.PayloadSchemaType.Float, qe.PayloadSchemaType.Float) for n in FLOAT_INDEXES]
    for name, schema, kind in wanted:
        info = existing.get(name)
        if info is None or info.data_type != kind:
            shard.update(qe.UpdateOperation.create_field_index(name, schema))


class Gate:
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


class Timed:
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


def timed(shard: qe.EdgeShard, op: str) -> qe.EdgeShard:
    return cast(qe.EdgeShard, Timed(shard, op))
