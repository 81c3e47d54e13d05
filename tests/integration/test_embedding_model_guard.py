"""A vector store keeps the embedding model its vectors were made with: a service
configured with another one refuses to start instead of comparing vectors of two models."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pcm_common.models import local_minilm
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import EmbeddingModelMismatch, Resources
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import VectorPoint
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


async def test_a_store_from_before_models_were_recorded_is_checked_by_its_texts(
    tmp_path: Path,
) -> None:
    """No record: some stored texts are embedded again, and only the model that gives
    their vectors back is taken (and then recorded)."""
    texts = ["Alice moved to Berlin in March.", "The standup is at 9:30.", "I ran 5k in 27:10."]
    old = EdgeVectorStore(tmp_path / "shard", dim=local_minilm.DIM)
    await old.upsert(
        [
            VectorPoint(str(uuid.uuid4()), v.tolist(), {"tenant": "dev", "text": t})
            for t, v in zip(texts, local_minilm.embed(texts), strict=True)  # float MiniLM
        ]
    )
    await old.close()

    int8 = Resources(settings(tmp_path, "pcm-local/minilm-q8t"))
    try:
        with pytest.raises(EmbeddingModelMismatch, match="not embedded with 'pcm-local/") as e:
            await int8.open_vectors()
        # The local model that gives the vectors back is named.
        assert "set PCM_EMBEDDING_MODEL=pcm-local/minilm," in str(e.value)
        assert await int8.vectors.embedding_model() is None  # nothing recorded
    finally:
        await int8.aclose()

    made_with = Resources(settings(tmp_path, "pcm-local/minilm"))
    try:
        await made_with.open_vectors()
        assert await made_with.vectors.embedding_model() == "pcm-local/minilm"
    finally:
        await made_with.aclose()


async def test_a_float_store_opens_with_the_default_and_back(tmp_path: Path) -> None:
    """A store made with the float model (the default before `minilm-q8s`) keeps working
    under the default, whose queries are float anyway, and the other way round; the store
    keeps the model it recorded first. An unrelated model is still refused."""
    from pcm_common.models.embeddings import interchangeable

    assert interchangeable("pcm-local/minilm", "pcm-local/minilm-q8s")
    assert interchangeable("pcm-local/minilm-q8s", "pcm-local/minilm")
    assert not interchangeable("pcm-local/minilm-q8s", "pcm-local/minilm-q8t")
    assert not interchangeable("pcm-local/minilm", "openai/minilm")
    for model in ("pcm-local/minilm", "pcm-local/minilm-q8s", "pcm-local/minilm"):
        res = Resources(settings(tmp_path, model))
        try:
            await res.open_vectors()
            assert await res.vectors.embedding_model() == "pcm-local/minilm"
        finally:
            await res.aclose()
    other = Resources(settings(tmp_path, "pcm-local/minilm-q8t"))
    try:
        with pytest.raises(EmbeddingModelMismatch):
            await other.open_vectors()
    finally:
        await other.aclose()
