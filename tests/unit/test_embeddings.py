"""Local MiniLM embeddings and the litellm-routed Embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import litellm
import numpy as np
import pytest

from pcm_common.models import local_minilm
from pcm_common.models.embeddings import (
    _LOCAL_MODELS,
    DEFAULT_MODEL,
    LOCAL_PROVIDER,
    Embedder,
    known_dim,
    register_local_provider,
)

# The `local_minilm` graph the default model stores memories with.
DEFAULT_VARIANT = _LOCAL_MODELS[DEFAULT_MODEL.split("/", 1)[1]]

SENTS = [
    "The cat sits on the mat",
    "A cat is sitting on a rug",
    "Quarterly revenue figures were released by the finance department yesterday.",
    "Caroline went to the LGBTQ support group on 7 May 2023 with Melanie.",
    "We migrated the billing service from MySQL to Postgres last year.",
    "",
]


def test_local_shape_and_norm() -> None:
    vecs = local_minilm.embed(SENTS)
    assert vecs.shape == (len(SENTS), 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert local_minilm.embed([]).shape == (0, 384)


def test_batch_equals_one_by_one() -> None:
    batched = local_minilm.embed(SENTS)
    single = np.stack([local_minilm.embed([s])[0] for s in SENTS])
    assert np.abs(batched - single).max() < 1e-4


def test_paraphrase_closer_than_unrelated() -> None:
    a, b, c = local_minilm.embed(SENTS[:3])
    para, unrelated = float(a @ b), float(a @ c)
    assert para > 0.6
    assert para - unrelated > 0.4


def test_long_input_truncated_to_max_tokens() -> None:
    long = "word " * 5000  # far beyond 256 tokens: must not fail, must stay normalised
    (v,) = local_minilm.embed([long])
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_registration_is_idempotent() -> None:
    import litellm

    register_local_provider()
    register_local_provider()
    Embedder()
    n = sum(1 for i in litellm.custom_provider_map if i["provider"] == LOCAL_PROVIDER)
    assert n == 1


async def test_litellm_route_matches_direct() -> None:
    import litellm

    register_local_provider()
    resp = await litellm.aembedding(model=DEFAULT_MODEL, input=SENTS[:2])
    got = np.array([d["embedding"] for d in resp.data], dtype=np.float32)
    np.testing.assert_allclose(
        got, local_minilm.embed(SENTS[:2], variant=DEFAULT_VARIANT), atol=1e-6
    )
    sync = litellm.embedding(model=DEFAULT_MODEL, input=SENTS[:1])
    np.testing.assert_allclose(sync.data[0]["embedding"], got[0], atol=1e-6)
    # The local model prices its own answers at zero: litellm does not price them again.
    assert resp._hidden_params["response_cost"] == 0.0


async def test_embedder_order_batching_and_dim() -> None:
    e = Embedder(batch_size=2)
    assert e.dim == 384
    out = await e.embed(SENTS)
    assert len(out) == len(SENTS) and all(len(v) == 384 for v in out)
    direct = np.stack(
        [local_minilm.embed([s if s else " "], variant=DEFAULT_VARIANT)[0] for s in SENTS]
    )
    np.testing.assert_allclose(np.array(out), direct, atol=1e-4)
    one = await e.embed_one(SENTS[0])
    np.testing.assert_allclose(one, out[0], atol=1e-6)
    assert await e.embed([]) == []


async def test_embedder_calls_local_model_once_and_hosted_by_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, int]] = []
    real = litellm.aembedding

    async def counting(**kw: Any) -> Any:
        calls.append((kw["model"], len(kw["input"])))
        if kw["model"].startswith("pcm-local/"):
            return await real(**kw)
        data = [{"index": i, "embedding": [1.0, 0.0]} for i in range(len(kw["input"]))]
        return litellm.EmbeddingResponse(data=data)

    monkeypatch.setattr(litellm, "aembedding", counting)
    await Embedder(batch_size=2).embed(SENTS[:5])
    assert calls == [(DEFAULT_MODEL, 5)], "the local model runs its own batches"
    calls.clear()
    out = await Embedder("openai/some-new-model", batch_size=2, dim=2).embed(SENTS[:5])
    assert [n for _, n in calls] == [2, 2, 1] and len(out) == 5


async def test_embedder_truncates_to_max_chars() -> None:
    e = Embedder(max_chars=20)
    text = "The cat sits on the mat and then wanders off to chase a red ball in the garden."
    (a,) = await e.embed([text])
    b = local_minilm.embed([text[:20]], variant=DEFAULT_VARIANT)[0]
    np.testing.assert_allclose(a, b, atol=1e-6)


async def test_queries_of_the_default_model_are_embedded_in_float() -> None:
    """The default stores memories with the smoothed int8 graph and embeds queries with
    the float one (the same network); a model without a query model embeds both alike."""
    e = Embedder(max_chars=20)
    assert e.is_local and e.query_model == f"{LOCAL_PROVIDER}/minilm"
    text = "When did Caroline go to the support group?"
    query = np.array(await e.embed_query(text))
    np.testing.assert_allclose(query, local_minilm.embed([text[:20]])[0], atol=1e-6)
    stored = np.array(await e.embed_one(text))
    np.testing.assert_allclose(stored, local_minilm.embed([text[:20]], variant="q8s")[0], atol=1e-6)
    assert 0.995 < float(query @ stored) < 1.0
    assert await e.embed_queries([text, text]) == [query.tolist()] * 2
    plain = Embedder(f"{LOCAL_PROVIDER}/minilm-q8t")
    assert plain.query_model == plain.model
    assert await plain.embed_query(text) == await plain.embed_one(text)
    assert not Embedder("openai/some-new-model").is_local


def test_dims_and_config() -> None:
    assert known_dim("openai/text-embedding-3-small") == 1536
    assert known_dim("ollama/nomic-embed-text:latest") == 768
    e = Embedder("openai/some-new-model")
    with pytest.raises(RuntimeError):
        _ = e.dim
    assert Embedder("openai/some-new-model", dim=512).dim == 512
    with pytest.raises(ValueError):
        Embedder(batch_size=0)


async def test_unknown_local_model_rejected() -> None:
    with pytest.raises(Exception, match="unknown"):
        await Embedder(f"{LOCAL_PROVIDER}/nope").embed(["x"])


def test_int8_copy_is_reused_and_stays_close() -> None:
    """minilm-q8: an int8 copy of the packaged graph in the machine's cache folder (made
    there once: tests/integration/test_model_copies.py); a text gets the same vector alone
    or among others, close to the float model's."""
    from pcm_common.models import minilm_q8

    path = minilm_q8.quantized_path(local_minilm._onnx_path())
    assert path.parent == minilm_q8.cache_dir() and path.exists()
    stamp = path.stat().st_mtime_ns
    assert minilm_q8.quantized_path(local_minilm._onnx_path()) == path
    assert path.stat().st_mtime_ns == stamp  # reused, not made again
    q8 = local_minilm.embed(SENTS[:5], variant="q8")
    alone = np.stack([local_minilm.embed([s], variant="q8")[0] for s in SENTS[:5]])
    np.testing.assert_allclose(q8, alone, atol=1e-6)
    cos = (q8 * local_minilm.embed(SENTS[:5])).sum(axis=1)
    assert cos.min() > 0.97
    assert known_dim(f"{LOCAL_PROVIDER}/minilm-q8") == 384


async def test_local_calls_skip_litellm_logging_unless_a_callback_listens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With nothing registered, a local embedding does not build litellm's success-log
    payload; a registered callback still hears every call."""
    import asyncio

    from litellm.integrations.custom_logger import CustomLogger
    from litellm.litellm_core_utils.litellm_logging import Logging

    handled: list[str] = []
    original = Logging.async_success_handler

    async def counting(self: Logging, *args: Any, **kwargs: Any) -> Any:
        handled.append(self.model)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Logging, "async_success_handler", counting)
    emb = Embedder()
    await emb.embed(["what did Melanie paint?"])
    await asyncio.sleep(0.05)  # the handler runs as a task after the call
    assert handled == []

    heard: list[Any] = []

    class Listener(CustomLogger):
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            heard.append(response_obj)

    monkeypatch.setattr(litellm, "callbacks", [Listener()])
    await emb.embed(["what did Melanie paint?"])
    for _ in range(50):
        if heard:
            break
        await asyncio.sleep(0.02)
    assert handled and len(heard) == 1


@pytest.mark.parametrize("variant", local_minilm.VARIANTS)
def test_batch_workers_give_the_vectors_of_one_worker(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [s for s in SENTS * 6 if s] + ["one more"]  # runs split unevenly
    monkeypatch.setenv("PCM_EMBED_WORKERS", "1")
    one = local_minilm.embed(texts, variant=variant)
    for workers in ("2", "3"):
        monkeypatch.setenv("PCM_EMBED_WORKERS", workers)
        assert np.array_equal(local_minilm.embed(texts, variant=variant), one)


def _batched_alike_and_cos_to_float(variant: str, other: str) -> tuple[np.ndarray, np.ndarray]:
    """Checks that `variant` gives a text the same vector in a batch as alone; returns the
    cos of its vectors, and of `other`'s, to the float graph's."""
    texts = [s for s in SENTS if s] * 4
    batched = local_minilm.embed(texts, variant=variant)
    alone = np.stack([local_minilm.embed([t], variant=variant)[0] for t in texts])
    np.testing.assert_allclose(batched, alone, atol=1e-6)
    exact = local_minilm.embed(texts)
    theirs = local_minilm.embed(texts, variant=other)
    return (batched * exact).sum(axis=1), (theirs * exact).sum(axis=1)


def test_per_token_int8_is_batched_alike_and_closer_than_per_tensor() -> None:
    """minilm-q8t scales each token on its own: a text's vector does not depend on the
    texts run with it (so runs are batched), and it is nearer the float model's than the
    per-tensor copy's."""
    from pcm_common.models import minilm_q8

    path = minilm_q8.per_token_path(local_minilm._onnx_path())
    assert path.exists() and path.name.startswith(f"minilm-{minilm_q8.PER_TOKEN_RECIPE}-")
    per_token, per_tensor = _batched_alike_and_cos_to_float("q8t", "q8")
    assert per_token.min() > 0.99
    assert per_token.mean() > per_tensor.mean()
    assert known_dim(f"{LOCAL_PROVIDER}/minilm-q8t") == 384


def test_smoothed_int8_is_batched_alike_and_nearest_the_float_model() -> None:
    """minilm-q8s: smoothed per-token int8 with the down projections in float, reused from
    the cache folder; batched like q8t, and nearer the float model than q8t."""
    import onnx

    from pcm_common.models import minilm_smooth

    path = minilm_smooth.smooth_path(local_minilm._onnx_path())
    assert path.name.startswith(f"minilm-{minilm_smooth.RECIPE}-")
    stamp = path.stat().st_mtime_ns
    assert minilm_smooth.smooth_path(local_minilm._onnx_path()) == path
    assert path.stat().st_mtime_ns == stamp  # reused, not made again
    graph = onnx.load(str(path)).graph
    ops = [n.op_type for n in graph.node]
    # Per layer: q, k, v, output and up projections in int8, the down projection in float;
    # one smoothing scale per input: q/k/v share theirs, the output and up have their own.
    assert ops.count("MatMulInteger") == 30
    assert sum(i.name.endswith("_smooth_inv") for i in graph.initializer) == 18
    smoothed, per_token = _batched_alike_and_cos_to_float("q8s", "q8t")
    assert smoothed.min() > 0.995
    assert smoothed.mean() > per_token.mean()
    assert known_dim(f"{LOCAL_PROVIDER}/minilm-q8s") == 384


def test_smoothing_alone_keeps_the_float_graphs_vectors(tmp_path: Path) -> None:
    """Before quantization, dividing each MatMul's input by s and multiplying its weight
    rows by s is an identity: the smoothed float graph gives the float vectors."""
    import onnxruntime as ort

    from pcm_common.models import calibration, minilm_q8, minilm_smooth

    folded, smoothed = tmp_path / "folded.onnx", tmp_path / "smoothed.onnx"
    minilm_q8.fold(local_minilm._onnx_path(), folded)
    kept_float = minilm_smooth._smooth(folded, smoothed, calibration.texts()[:32])
    assert len(kept_float) == 6  # the down projections

    def vectors(graph: Path) -> np.ndarray:
        session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}
        feeds, _ = local_minilm.feeds([s for s in SENTS if s], wanted)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        return np.asarray(hidden)

    np.testing.assert_allclose(vectors(smoothed), vectors(folded), rtol=1e-3, atol=1e-3)
