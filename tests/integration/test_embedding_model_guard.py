"""A vector store keeps the embedding model its vectors were made with: a service
configured with another one refuses to start instead of comparing vectors of two models."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcm_common.config import PcmSettings
from pcm_common.resources import EmbeddingModelMismatch, Resources
from tests.conftest import TEST_REDIS


def settings(tmp_path: Path, model: str) -> PcmSettings:
    return PcmSettings(
        redis_url=f"{TEST_REDIS}/13", qdrant_path=tmp_path / "shard", embedding_model=model
    )


async def test_a_store_refuses_another_embedding_model(tmp_path: Path) -> None:
    first = Resources(settings(tmp_path, "pcm-local/minilm"))
    try:
        await first.open_vectors()
        await first.open_vectors()  # the same model again: fine
    finally:
        await first.aclose()

    other = Resources(settings(tmp_path, "pcm-local/minilm-q8"))
    try:
        with pytest.raises(EmbeddingModelMismatch, match="PCM_EMBEDDING_MODEL=pcm-local/minilm"):
            await other.open_vectors()
    finally:
        await other.aclose()

    again = Resources(settings(tmp_path, "pcm-local/minilm"))
    try:
        await again.open_vectors()
    finally:
        await again.aclose()
