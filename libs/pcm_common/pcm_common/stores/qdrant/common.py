"""Helpers both Qdrant adapters share (Edge in process, qdrant-client for a server)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from pcm_common.stores.vectors import ScoredPoint

DENSE = "dense"  # named dense vector (cosine)
SPARSE = "lexical"  # named sparse vector (IDF modifier)


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


def canonical_id(value: str) -> str:
    """A point id as Qdrant returns it (a lower-case hyphenated UUID); anything that is not
    a UUID unchanged (no point has it)."""
    return str(uuid.UUID(value)) if is_uuid(value) else value


def keep_fused_report_cosine(
    points: list[ScoredPoint], query: list[float], vectors: Sequence[Any] | None = None
) -> None:
    """After a fused (RRF) query: keep the fused score in `fused` and report the cosine of
    the query to each stored dense vector as `score`, so relevance thresholds keep their
    meaning whatever the ranking signal. `vectors` (one per point, as the engine returned
    them) replaces the points' own `vector` when given."""
    q = np.asarray(query, dtype=np.float32)
    qn = float(np.linalg.norm(q))
    rows = list(vectors) if vectors is not None else [p.vector for p in points]
    # One array conversion for all the rows instead of one per point (~1 ms for a pool of
    # 100 at 384 dims); each row's dot and norm are the same 1-D operations as before, so
    # every cosine is bit for bit what it was.
    mat = (
        np.asarray(rows, dtype=np.float32)
        if rows and all(r is not None and len(r) == len(q) for r in rows)
        else None
    )
    for i, p in enumerate(points):
        p.fused = p.score
        if rows[i] is None or qn == 0.0:
            p.score = 0.0
            continue
        v = mat[i] if mat is not None else np.asarray(rows[i], dtype=np.float32)
        vn = float(np.linalg.norm(v))
        p.score = float(q @ v) / (qn * vn) if vn else 0.0
