"""Reranker port, its adapters, the gating rule and the factory (DESIGN §3, whitepaper §3.5).

`Reranker.rerank(query, docs)` returns one relevance probability in [0, 1] per document, in
input order, so recall can use it as `rel` in the score and apply the relevance floor.

- `LiteLLMReranker`: hosted rerankers through `litellm.arerank` (Cohere, Jina, Voyage,
  Together, Infinity, ...); every model call goes through litellm (DESIGN §8).
- `LocalCrossEncoder`: an ONNX cross-encoder loaded from a configured path, tokenised with
  the `tokenizer.json` next to it; the probability is the sigmoid of the logit.

No cross-encoder with weights installs from the package index, so by default none is
configured and `build_reranker` returns None: recall then ranks by the fused rank score of
its dense and lexical searches, and its floor applies to the cosine.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
from pydantic_settings import BaseSettings, SettingsConfigDict

from pcm_common.domain.scoring import RELEVANCE_FLOOR
from pcm_common.models.onnx_session import OnnxSession
from pcm_common.models.token_head import head

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Gating (*start*): the vector candidates are decisive when the best is a clear winner.
GATE_MIN_TOP = 0.85
GATE_MIN_MARGIN = 0.15


def should_rerank(
    cosines: Sequence[float],
    *,
    min_top: float = GATE_MIN_TOP,
    min_margin: float = GATE_MIN_MARGIN,
) -> bool:
    """Rerank unless the candidates are decisive: top-1 cos ≥ `min_top` and
    top-1 − top-2 ≥ `min_margin` (a lone candidate counts as top-2 = 0). No candidates,
    nothing to rerank."""
    if not cosines:
        return False
    best = sorted(cosines, reverse=True)
    top1 = best[0]
    top2 = best[1] if len(best) > 1 else 0.0
    decisive = top1 >= min_top and top1 - top2 >= min_margin
    return not decisive


def sigmoid(x: float) -> float:
    # Split by sign so large |x| never overflows exp.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _clip01(x: float) -> float:
    return min(max(float(x), 0.0), 1.0)


class Reranker(ABC):
    """Scores (query, document) pairs; probabilities in [0, 1], in input order."""

    #: What /readyz and the docs show as the active reranker.
    name: str = "none"
    #: Relevance floor on this reranker's probability scale (DESIGN §3: 0.35 *start*).
    floor: float = RELEVANCE_FLOOR

    @abstractmethod
    async def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        """One probability per document, same order as `docs`."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most adapters hold nothing
        """Release resources (sessions, clients)."""


class LiteLLMReranker(Reranker):
    """A hosted reranker through `litellm.arerank`.

    `logits=True` for providers that return raw scores (some self-hosted servers): they go
    through a sigmoid. Otherwise scores are taken as probabilities and clipped to [0, 1]
    (Cohere, Jina and Voyage return relevance in [0, 1]). `litellm_kwargs` (api_base,
    api_key, timeout, client, ...) are passed to every call.
    """

    def __init__(
        self,
        model: str,
        *,
        logits: bool = False,
        max_doc_chars: int = 4000,
        floor: float = RELEVANCE_FLOOR,
        **litellm_kwargs: Any,
    ) -> None:
        self.model = model
        self.logits = logits
        self.max_doc_chars = max_doc_chars
        self.floor = floor
        self.name = f"litellm:{model}"
        self._kwargs = litellm_kwargs

    async def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        if not docs:
            return []
        from pcm_common.models import gateway  # imports litellm: only once a call is made

        # Hosted APIs bill and limit by size; the head of a memory carries its gist.
        documents = [d[: self.max_doc_chars] for d in docs]
        results = await gateway.rerank(self.model, query, documents, **self._kwargs)
        scores = [0.0] * len(docs)  # a document the provider left out counts as irrelevant
        for idx, raw in results:
            if 0 <= idx < len(scores):
                scores[idx] = sigmoid(raw) if self.logits else _clip01(raw)
        return scores


def probabilities(output: npt.NDArray[Any]) -> list[float]:
    """Cross-encoder output -> relevance probabilities.

    (n,) or (n, 1): one logit per pair -> sigmoid. (n, 2): [irrelevant, relevant] logits ->
    softmax probability of the second (the two-class heads some models export).
    """
    arr = np.asarray(output, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 2:
        shifted = arr - arr.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        return [float(p) for p in e[:, 1] / e.sum(axis=1)]
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"unexpected cross-encoder output shape {arr.shape}")
    return [sigmoid(float(x)) for x in arr]


_INT_TYPES: dict[str, Any] = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}


class LocalCrossEncoder(Reranker):
    """ONNX cross-encoder on CPU: `path` is the model file or a directory holding
    `model.onnx` (or a single `*.onnx`) and `tokenizer.json`.

    Pairs are encoded as (query, document), so the tokenizer's own template adds the
    special tokens and segment ids the model was trained with. Inputs the graph declares
    among input_ids / attention_mask / token_type_ids are fed, in the dtype it declares.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_tokens: int = 512,
        batch_size: int = 32,
        threads: int | None = None,
        floor: float = RELEVANCE_FLOOR,
    ) -> None:
        self.model_path, self.tokenizer_path = self._locate(Path(path))
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads
        self.floor = floor
        self.name = f"onnx:{self.model_path}"
        self._lock = threading.Lock()
        self._session: OnnxSession | None = None
        self._tokenizer: Tokenizer | None = None

    @staticmethod
    def _locate(path: Path) -> tuple[Path, Path]:
        if path.is_file():
            model, folder = path, path.parent
        elif path.is_dir():
            folder = path
            model = path / "model.onnx"
            if not model.exists():
                found = sorted(path.glob("*.onnx"))
                if len(found) != 1:
                    raise FileNotFoundError(f"no single *.onnx model in {path}")
                model = found[0]
        else:
            raise FileNotFoundError(f"cross-encoder path {path} does not exist")
        tokenizer = folder / "tokenizer.json"
        if not tokenizer.exists():
            raise FileNotFoundError(f"{tokenizer} is missing (the model's tokenizer)")
        return model, tokenizer

    def _load(self) -> tuple[OnnxSession, Tokenizer]:
        # Loaded on first use, once, even when several recalls arrive together.
        with self._lock:
            if self._session is None or self._tokenizer is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self.threads or max(1, min(8, os.cpu_count() or 1))
                opts.inter_op_num_threads = 1
                tok = Tokenizer.from_file(str(self.tokenizer_path))
                tok.enable_truncation(max_length=self.max_tokens)
                pad_id = next(
                    (i for t in ("[PAD]", "<pad>") if (i := tok.token_to_id(t)) is not None),
                    0,
                )
                tok.enable_padding(pad_id=pad_id)
                self._session = ort.InferenceSession(
                    str(self.model_path), sess_options=opts, providers=["CPUExecutionProvider"]
                )
                self._tokenizer = tok
            return self._session, self._tokenizer

    def score_sync(self, query: str, docs: Sequence[str]) -> list[float]:
        """Blocking scoring; `rerank` runs it in a worker thread."""
        if not docs:
            return []
        session, tok = self._load()
        inputs = {i.name: _INT_TYPES.get(i.type, np.int64) for i in session.get_inputs()}
        out: list[float] = []
        for start in range(0, len(docs), self.batch_size):
            batch = [
                (query, head(tok, d, self.max_tokens))
                for d in docs[start : start + self.batch_size]
            ]
            encs = tok.encode_batch(batch)
            columns = {
                "input_ids": [e.ids for e in encs],
                "attention_mask": [e.attention_mask for e in encs],
                "token_type_ids": [e.type_ids for e in encs],
            }
            feeds = {
                name: np.asarray(columns[name], dtype=dtype)
                for name, dtype in inputs.items()
                if name in columns
            }
            (logits, *_) = session.run(None, feeds)
            out.extend(probabilities(logits))
        return out

    async def rerank(self, query: str, docs: Sequence[str]) -> list[float]:
        return await asyncio.to_thread(self.score_sync, query, list(docs))


class RerankerConfig(Protocol):
    """What `build_reranker` reads; `RerankerSettings` or any settings class with these."""

    @property
    def reranker_model(self) -> str: ...

    @property
    def reranker_path(self) -> str | Path: ...


class RerankerSettings(BaseSettings):
    """Reranker knobs (env `PCM_RERANKER_*`); mix into a service's settings or use alone.

    Set `reranker_model` to a litellm rerank model (e.g. `cohere/rerank-v3.5`,
    `jina_ai/jina-reranker-v2-base-multilingual`, `voyage/rerank-2`) or `reranker_path` to
    a local ONNX cross-encoder; the path wins when both are set (no network needed).
    """

    model_config = SettingsConfigDict(env_prefix="PCM_", extra="ignore")

    reranker_model: str = ""
    reranker_path: str = ""
    reranker_api_base: str = ""
    reranker_api_key: str = ""
    reranker_timeout_s: float = 5.0
    reranker_logits: bool = False  # hosted scores are raw logits (self-hosted servers)
    reranker_max_tokens: int = 512
    reranker_floor: float = RELEVANCE_FLOOR


def build_reranker(settings: RerankerConfig) -> Reranker | None:
    """The configured reranker, or None when none is (recall then ranks by the fused rank
    score)."""
    floor = float(getattr(settings, "reranker_floor", RELEVANCE_FLOOR))
    path = str(settings.reranker_path or "")
    if path:
        return LocalCrossEncoder(
            path, max_tokens=int(getattr(settings, "reranker_max_tokens", 512)), floor=floor
        )
    model = settings.reranker_model
    if not model:
        return None
    kwargs: dict[str, Any] = {"timeout": float(getattr(settings, "reranker_timeout_s", 5.0))}
    if api_base := getattr(settings, "reranker_api_base", ""):
        kwargs["api_base"] = api_base
    if api_key := getattr(settings, "reranker_api_key", ""):
        kwargs["api_key"] = api_key
    return LiteLLMReranker(
        model, logits=bool(getattr(settings, "reranker_logits", False)), floor=floor, **kwargs
    )
