"""The cosine a hybrid search reports is exactly the per-point formula, whether the dense
vectors come as the points' own lists or as the engine's rows (one array conversion)."""

from __future__ import annotations

import numpy as np

from pcm_common.stores.qdrant.common import keep_fused_report_cosine
from pcm_common.stores.vectors import ScoredPoint


def _reference(query: list[float], vector: list[float] | None) -> float:
    # The formula as it was per point before the rows were converted at once.
    q = np.asarray(query, dtype=np.float32)
    qn = float(np.linalg.norm(q))
    if vector is None or qn == 0.0:
        return 0.0
    v = np.asarray(vector, dtype=np.float32)
    vn = float(np.linalg.norm(v))
    return float(q @ v) / (qn * vn) if vn else 0.0


def _points(rows: list[list[float] | None]) -> list[ScoredPoint]:
    return [
        ScoredPoint(id=str(i), score=1.0 / (i + 1), payload={}, vector=r)
        for i, r in enumerate(rows)
    ]


def test_rows_give_bit_identical_cosines() -> None:
    rng = np.random.default_rng(3)
    query = rng.standard_normal(384).astype(float).tolist()
    rows: list[list[float] | None] = [
        rng.standard_normal(384).astype(float).tolist() for _ in range(100)
    ]
    rows[7] = [0.0] * 384  # a zero vector has no direction: cosine 0
    own, given = _points(rows), _points([None] * len(rows))
    keep_fused_report_cosine(own, query)
    keep_fused_report_cosine(given, query, rows)
    want = [_reference(query, r) for r in rows]
    assert [p.score for p in own] == want
    assert [p.score for p in given] == want
    assert [p.fused for p in given] == [1.0 / (i + 1) for i in range(len(rows))]
    assert all(p.vector is None for p in given)


def test_missing_rows_fall_back_per_point() -> None:
    query = [1.0, 0.0, 0.0]
    rows: list[list[float] | None] = [[1.0, 1.0, 0.0], None, [0.0, 2.0, 0.0]]
    points = _points([None] * 3)
    keep_fused_report_cosine(points, query, rows)
    assert [p.score for p in points] == [_reference(query, r) for r in rows]
    assert points[1].score == 0.0
