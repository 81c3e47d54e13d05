"""The search both Qdrant adapters send, shaped once (`pcm_common.stores.qdrant.query`):
each library's request is the one its adapter wrote by hand before, dense and hybrid."""

from __future__ import annotations

import qdrant_edge as qe
from qdrant_client import models

from pcm_common.stores.qdrant.edge import query as edge_query
from pcm_common.stores.qdrant.query import PREFETCH_MIN, build, plan_search
from pcm_common.stores.qdrant.server import DIALECT as SERVER
from pcm_common.stores.qdrant.server import to_qdrant_filter
from pcm_common.stores.vectors import Filter, SparseVec

DENSE_Q = [0.5, 0.25, 0.125]
SPARSE_Q = SparseVec([3, 17], [0.75, 0.5])
FLT = Filter(must={"state": "active"})


def test_the_plan() -> None:
    assert plan_search(DENSE_Q, None, limit=5).hybrid is False
    # A sparse vector without terms (no known word in the query): dense only.
    assert plan_search(DENSE_Q, SparseVec([], []), limit=5).sparse is None
    hybrid = plan_search([1, 0, 0], SPARSE_Q, limit=30, fusion_k=10)
    assert hybrid.hybrid and hybrid.fusion_k == 10 and hybrid.dense == [1.0, 0.0, 0.0]
    assert hybrid.depth == 120  # 4 x the limit
    assert plan_search(DENSE_Q, SPARSE_Q, limit=5).depth == PREFETCH_MIN
    assert plan_search(DENSE_Q, SPARSE_Q, limit=5, prefetch=7).depth == 7


def test_server_requests() -> None:
    qf = to_qdrant_filter("t", FLT)
    dense = build(plan_search(DENSE_Q, None, limit=5), SERVER, qf, payload=True, vectors=False)
    assert dense == {
        "query": DENSE_Q,
        "using": "dense",
        "prefetch": None,
        "query_filter": qf,
        "limit": 5,
        "with_payload": True,
        "with_vectors": False,
    }
    plan = plan_search(DENSE_Q, SPARSE_Q, limit=5, fusion_k=10)
    hybrid = build(plan, SERVER, qf, payload=["text"], vectors=["dense"])
    sparse = models.SparseVector(indices=[3, 17], values=[0.75, 0.5])
    assert hybrid == {
        "query": models.RrfQuery(rrf=models.Rrf(k=10)),
        "prefetch": [
            models.Prefetch(query=DENSE_Q, using="dense", limit=40, filter=qf),
            models.Prefetch(query=sparse, using="lexical", limit=40, filter=qf),
        ],
        "query_filter": qf,
        "limit": 5,
        "with_payload": ["text"],
        "with_vectors": ["dense"],
    }


def test_edge_requests() -> None:
    ef = edge_query.to_edge_filter("t", FLT)
    dialect = edge_query.DIALECT
    dense = build(plan_search(DENSE_Q, None, limit=5), dialect, ef, payload=False, vectors=False)
    by_hand = qe.QueryRequest(
        limit=5,
        query=qe.Query.Nearest(DENSE_Q, using="dense"),
        filter=ef,
        with_payload=False,
        with_vector=False,
    )
    assert repr(dense) == repr(by_hand)
    plan = plan_search(DENSE_Q, SPARSE_Q, limit=5, fusion_k=10)
    hybrid = build(plan, dialect, ef, payload=True, vectors=["dense"])
    by_hand = qe.QueryRequest(
        limit=5,
        prefetches=[
            qe.Prefetch(limit=40, query=qe.Query.Nearest(DENSE_Q, using="dense"), filter=ef),
            qe.Prefetch(
                limit=40,
                query=qe.Query.Nearest(qe.SparseVector([3, 17], [0.75, 0.5]), using="lexical"),
                filter=ef,
            ),
        ],
        query=qe.Fusion.Rrf(k=10),  # type: ignore[arg-type]  # the stub omits Rrf
        filter=ef,
        with_payload=True,
        with_vector=["dense"],
    )
    assert repr(hybrid) == repr(by_hand)
