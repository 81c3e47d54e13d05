"""Helpers both Qdrant adapters share (Edge in process, qdrant-client for a server)."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from pcm_common.stores.vectors import ScoredPoint

DENSE = "dense"  # named dense vector (cosine)
SPARSE = "lexical"  # named sparse vector (IDF modifier)

RRF_K = 60  # default fusion constant (recall passes its own, tuned: 10)
# Hybrid prefetch depth per vector: enough candidates that a lexical-only hit survives.
PREFETCH_MIN = 40
PREFETCH_FACTOR = 4


def dense_of(vector: Any) -> list[float] | None:
    """The dense part of a point's named vectors, if it was returned."""
    if isinstance(vector, dict):
        dense = vector.get(DENSE)
        return [float(x) for x in dense] if dense is not None else None
    return None


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return False
    return True


def keep_fused_report_cosine(points: list[ScoredPoint], query: list[float]) -> None:
    """After a fused (RRF) query: keep the fused score in `fused` and report the cosine of
    the query to each stored dense vector as `score`, so relevance thresholds keep their
    meaning whatever the ranking signal."""
    q = np.asarray(query, dtype=np.float32)
    qn = float(np.linalg.norm(q))
    for p in points:
        p.fused = p.score
        if p.vector is None or qn == 0.0:
            p.score = 0.0
            continue
        v = np.asarray(p.vector, dtype=np.float32)
        vn = float(np.linalg.norm(v))
        p.score = float(q @ v) / (qn * vn) if vn else 0.0
