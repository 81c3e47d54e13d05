"""Reranker port: gating rule, hosted adapter through litellm, local ONNX cross-encoder."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.models.rerank import (
    LiteLLMReranker,
    LocalCrossEncoder,
    RerankerSettings,
    build_reranker,
    probabilities,
    should_rerank,
    sigmoid,
)

# ---- gating -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cosines", "rerank"),
    [
        ([], False),  # nothing to rerank
        ([0.90], False),  # a lone strong candidate is decisive
        ([0.84], True),
        ([0.90, 0.74], False),  # margin 0.16
        ([0.74, 0.90], False),  # order of the input does not matter
        ([0.90, 0.80], True),  # margin too small
        ([0.85, 0.70], False),  # both thresholds inclusive
        ([0.80, 0.40, 0.30], True),  # top too weak
    ],
)
def test_gating_skips_only_decisive_candidates(cosines: list[float], rerank: bool) -> None:
    assert should_rerank(cosines) is rerank


@given(st.lists(st.floats(min_value=-1, max_value=1), min_size=2, max_size=60))
def test_gating_matches_the_rule(cosines: list[float]) -> None:
    best = sorted(cosines, reverse=True)
    decisive = best[0] >= 0.85 and best[0] - best[1] >= 0.15
    assert should_rerank(cosines) is (not decisive)


def test_probabilities_from_every_head_shape() -> None:
    assert probabilities(np.array([0.0, 2.0])) == pytest.approx([0.5, sigmoid(2.0)])
    assert probabilities(np.array([[0.0], [-3.0]])) == pytest.approx([0.5, sigmoid(-3.0)])
    two = probabilities(np.array([[0.0, 0.0], [0.0, math.log(3.0)]]))
    assert two == pytest.approx([0.5, 0.75])
    assert sigmoid(1000.0) == 1.0 and sigmoid(-1000.0) == 0.0  # no overflow
    with pytest.raises(ValueError):
        probabilities(np.zeros((2, 3)))


# ---- factory ----------------------------------------------------------------------------


def test_factory_returns_none_unless_configured(tmp_path: Path) -> None:
    assert build_reranker(RerankerSettings()) is None
    hosted = build_reranker(RerankerSettings(reranker_model="cohere/rerank-v3.5"))
    assert isinstance(hosted, LiteLLMReranker) and hosted.name == "litellm:cohere/rerank-v3.5"
    _write_cross_encoder(tmp_path)
    local = build_reranker(
        RerankerSettings(reranker_model="cohere/rerank-v3.5", reranker_path=str(tmp_path))
    )
    assert isinstance(local, LocalCrossEncoder)  # the local path wins: no network needed


def test_factory_reads_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCM_RERANKER_MODEL", "jina_ai/jina-reranker-v2-base-multilingual")
    monkeypatch.setenv("PCM_RERANKER_FLOOR", "0.2")
    r = build_reranker(RerankerSettings())
    assert r is not None and r.floor == 0.2


# ---- hosted reranker through litellm (Cohere wire format, mocked transport) ----------------


async def test_litellm_reranker_maps_results_back_to_input_order() -> None:
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"url": str(request.url), "body": body})
        # Providers return results best first, not in input order, and may omit some.
        return httpx.Response(
            200,
            json={
                "id": "r1",
                "results": [
                    {"index": 2, "relevance_score": 0.91},
                    {"index": 0, "relevance_score": 0.12},
                ],
                "meta": {"billed_units": {"search_units": 1}},
            },
        )

    client = AsyncHTTPHandler(transport=httpx.MockTransport(handler))
    r = LiteLLMReranker(
        "cohere/rerank-english-v3.0",
        api_key="test-key",
        api_base="https://rerank.test",
        client=client,
        max_doc_chars=10,
    )
    scores = await r.rerank("where does Alice live?", ["a" * 50, "bob", "Alice: Berlin"])
    assert scores == pytest.approx([0.12, 0.0, 0.91])
    (call,) = seen
    assert call["url"].startswith("https://rerank.test")
    assert call["body"]["query"] == "where does Alice live?"
    assert call["body"]["documents"][0] == "a" * 10  # capped before sending
    assert call["body"]["top_n"] == 3
    assert await r.rerank("q", []) == []  # no call for nothing
    assert len(seen) == 1


async def test_litellm_reranker_sigmoid_for_logit_providers() -> None:
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    def handler(request: httpx.Request) -> httpx.Response:
        results = [{"index": 0, "relevance_score": 2.0}, {"index": 1, "relevance_score": -4.0}]
        return httpx.Response(200, json={"id": "r2", "results": results})

    client = AsyncHTTPHandler(transport=httpx.MockTransport(handler))
    r = LiteLLMReranker(
        "cohere/rerank-english-v3.0",
        api_key="k",
        api_base="https://rerank.test",
        client=client,
        logits=True,
    )
    assert await r.rerank("q", ["x", "y"]) == pytest.approx([sigmoid(2.0), sigmoid(-4.0)])


# ---- local ONNX cross-encoder -------------------------------------------------------------
# The `onnx` package is not installed, so the test model is written as raw protobuf bytes
# (field numbers from onnx.proto). The graph scores a pair by the number of attended
# second-segment tokens: logit = Σ(token_type_ids · attention_mask) − 2, which checks that
# pairs, segment ids, padding masks and dtypes reach the model as a cross-encoder expects.


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(raw)) + raw


FLOAT, INT64 = 1, 7


def _value_info(name: str, elem_type: int, dims: list[str]) -> bytes:
    shape = b"".join(_bytes(1, _bytes(2, d)) for d in dims)  # Dimension.dim_param
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op: str, inputs: list[str], outputs: list[str], attrs: bytes = b"") -> bytes:
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    return body + _bytes(4, op) + attrs


def _tensor(name: str, data_type: int, dims: list[int], raw: bytes) -> bytes:
    return (
        b"".join(_int(1, d) for d in dims) + _int(2, data_type) + _bytes(8, name) + _bytes(9, raw)
    )


def _cross_encoder_onnx() -> bytes:
    cast_to_float = _bytes(5, _bytes(1, "to") + _int(3, FLOAT) + _int(20, 2))  # INT attribute
    nodes = [
        _node("Mul", ["token_type_ids", "attention_mask"], ["second"]),
        _node("ReduceSum", ["second", "axes"], ["count"]),  # keepdims=1 -> (N, 1)
        _node("Cast", ["count"], ["count_f"], cast_to_float),
        _node("Sub", ["count_f", "two"], ["logits"]),
    ]
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "toy-cross-encoder")
    graph += _bytes(5, _tensor("axes", INT64, [1], struct.pack("<q", 1)))
    graph += _bytes(5, _tensor("two", FLOAT, [], struct.pack("<f", 2.0)))
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        graph += _bytes(11, _value_info(name, INT64, ["N", "L"]))
    graph += _bytes(12, _value_info("logits", FLOAT, ["N", "1"]))
    opset = _bytes(8, _bytes(1, "") + _int(2, 13))
    return _int(1, 7) + _bytes(2, "pcm-test") + _bytes(7, graph) + opset


def _write_cross_encoder(folder: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = "alice lives in berlin bob likes rust where does".split()
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    vocab.update({w: i + 4 for i, w in enumerate(words)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.save(str(folder / "tokenizer.json"))
    (folder / "model.onnx").write_bytes(_cross_encoder_onnx())


async def test_local_cross_encoder_scores_pairs(tmp_path: Path) -> None:
    _write_cross_encoder(tmp_path)
    enc = LocalCrossEncoder(tmp_path, batch_size=2)  # two batches, each padded differently
    docs = ["alice lives in berlin", "bob", "", "bob likes rust"]
    scores = await enc.rerank("where does alice", docs)
    # Second segment = document tokens + the closing [SEP]; padding must not count.
    expected = [sigmoid(len(d.split()) + 1 - 2) for d in docs]
    assert scores == pytest.approx(expected, abs=1e-6)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert await enc.rerank("q", []) == []
    assert enc.name.startswith("onnx:") and enc.name.endswith("model.onnx")


def test_local_cross_encoder_truncates_long_pairs(tmp_path: Path) -> None:
    _write_cross_encoder(tmp_path)
    enc = LocalCrossEncoder(tmp_path / "model.onnx", max_tokens=8)
    # [CLS] + 2 query tokens + [SEP] + 3 document tokens + [SEP] = 8 tokens.
    (score,) = enc.score_sync("alice lives", ["bob " * 40])
    assert score == pytest.approx(sigmoid(3 + 1 - 2), abs=1e-6)


def test_local_cross_encoder_needs_model_and_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LocalCrossEncoder(tmp_path / "missing")
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"tokenizer\.json"):
        LocalCrossEncoder(tmp_path)
