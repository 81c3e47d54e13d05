"""The local model's int8 copies made from scratch in an empty cache folder: each once,
through a temporary folder renamed into place (nothing else left behind), then reused. No
server, but making the copies quantizes the model (~4 s each): integration, not the unit
suite, whose tests use the copies in the machine's cache (tests/unit/test_embeddings.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pcm_common.models import local_minilm, minilm_q8, minilm_smooth

pytestmark = pytest.mark.slow

TEXTS = [
    "The cat sits on the mat",
    "Quarterly revenue figures were released by the finance department yesterday.",
    "We migrated the billing service from MySQL to Postgres last year.",
]


def test_each_copy_is_made_once_into_an_empty_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCM_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(local_minilm, "_models", {})  # sessions loaded from this folder
    src = local_minilm._onnx_path()
    per_tensor = minilm_q8.quantized_path(src)
    assert per_tensor.parent == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == [per_tensor.name]  # no leftovers
    per_token = minilm_q8.per_token_path(src)  # made from the per-tensor copy, reused
    smoothed = minilm_smooth.smooth_path(src)
    made = {per_tensor, per_token, smoothed}
    assert {p.name for p in tmp_path.iterdir()} == {p.name for p in made}
    stamps = {p: p.stat().st_mtime_ns for p in made}
    again = {minilm_q8.quantized_path(src), minilm_q8.per_token_path(src)}
    assert again | {minilm_smooth.smooth_path(src)} == made
    assert {p: p.stat().st_mtime_ns for p in made} == stamps  # reused, not made again
    exact = local_minilm.embed(TEXTS)
    for variant in ("q8", "q8t", "q8s"):
        cos = (local_minilm.embed(TEXTS, variant=variant) * exact).sum(axis=1)
        assert float(np.min(cos)) > 0.97, variant
