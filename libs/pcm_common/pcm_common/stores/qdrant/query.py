"""The search both Qdrant adapters send, shaped once: nearest by the dense vector, or
hybrid (a dense and a sparse prefetch, each filtered, fused by reciprocal rank fusion
inside Qdrant, the filter on top too).

The two client libraries (qdrant-client for a server, qdrant-edge in process) spell the
same query with different classes, so each adapter supplies its spelling (`Dialect`) and
`build` decides the shape: which prefetches, how deep, which filter where, which fusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pcm_common.stores.qdrant.common import DENSE, SPARSE
from pcm_common.stores.vectors import SparseVec

RRF_K = 60  # default fusion constant (recall passes its own, tuned: 10)
# Hybrid prefetch depth per vector: enough candidates that a lexical-only hit survives.
PREFETCH_MIN = 40
PREFETCH_FACTOR = 4

F = TypeVar("F", contravariant=True)  # the library's filter
Q = TypeVar("Q")  # a scoring query (nearest or fusion)
P = TypeVar("P")  # a prefetch
R = TypeVar("R", covariant=True)  # the request the adapter sends


@dataclass(frozen=True)
class SearchPlan:
    """What one search asks, whichever library sends it (`plan_search`)."""

    dense: list[float]
    sparse: SparseVec | None  # None: dense only
    limit: int
    depth: int  # points each prefetch of a hybrid search keeps
    fusion_k: int

    @property
    def hybrid(self) -> bool:
        return self.sparse is not None


def plan_search(
    vector: list[float],
    sparse: SparseVec | None,
    *,
    limit: int,
    fusion_k: int = RRF_K,
    prefetch: int | None = None,
) -> SearchPlan:
    """The port's `search` arguments as a plan: hybrid when `sparse` has terms, its
    prefetches `prefetch` deep (default: `PREFETCH_FACTOR` x `limit`, at least
    `PREFETCH_MIN`)."""
    hybrid = sparse is not None and bool(sparse.indices)
    return SearchPlan(
        dense=[float(x) for x in vector],
        sparse=sparse if hybrid else None,
        limit=limit,
        depth=prefetch or max(PREFETCH_MIN, PREFETCH_FACTOR * limit),
        fusion_k=fusion_k,
    )


class Dialect(Protocol[F, Q, P, R]):
    """One client library's spelling of the parts of a search."""

    def nearest(self, vector: list[float] | SparseVec, using: str) -> Q:
        """Nearest points to `vector` by the named vector `using`."""

    def fused(self, k: int) -> Q:
        """Reciprocal rank fusion of the prefetches, with constant `k`."""

    def prefetch(self, query: Q, *, limit: int, flt: F) -> P:
        """A prefetch of `limit` points by `query` among those matching `flt`."""

    def request(
        self,
        query: Q,
        *,
        prefetches: list[P] | None,
        flt: F,
        limit: int,
        payload: Any,
        vectors: Any,
    ) -> R:
        """The whole search, with the library's payload and vector selectors."""


def build(
    plan: SearchPlan, dialect: Dialect[F, Q, P, R], flt: F, *, payload: Any, vectors: Any
) -> R:
    """`plan` in `dialect`, filtered by `flt`; `payload` and `vectors` are the library's
    selectors (an adapter that reports cosines from the hits' vectors asks for them)."""
    dense = dialect.nearest(plan.dense, DENSE)
    if plan.sparse is None:
        return dialect.request(
            dense, prefetches=None, flt=flt, limit=plan.limit, payload=payload, vectors=vectors
        )
    # Filtered prefetches: each keeps its `depth` best of the matching points only.
    prefetches = [
        dialect.prefetch(dense, limit=plan.depth, flt=flt),
        dialect.prefetch(dialect.nearest(plan.sparse, SPARSE), limit=plan.depth, flt=flt),
    ]
    return dialect.request(
        dialect.fused(plan.fusion_k),
        prefetches=prefetches,
        flt=flt,
        limit=plan.limit,
        payload=payload,
        vectors=vectors,
    )
