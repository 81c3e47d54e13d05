"""Embeddings (DESIGN §8): every one goes through ``litellm.aembedding`` (`models.gateway`).

The embedded default ``pcm-local/minilm-q8s`` is a litellm custom provider backed by the
local ONNX MiniLM (:mod:`pcm_common.models.local_minilm`; memories by a smoothed int8 graph,
queries by the float one: `Embedder.embed_query`), so switching to a hosted model such as
``openai/text-embedding-3-small`` or ``ollama/nomic-embed-text`` is a configuration change
only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcm_common.models import gateway, local_minilm

LOCAL_PROVIDER = "pcm-local"
DEFAULT_MODEL = f"{LOCAL_PROVIDER}/minilm-q8s"

# Local model names the provider serves -> the `local_minilm` variant computing them. The
# int8 ones are the same model: "minilm-q8" one activation scale per tensor, "minilm-q8t"
# one per token (batched), "minilm-q8s" one per token after smoothing, the down projections
# in float. How close and how fast: docs/decisions/0033-embedding-model-minilm-q8s.md.
_LOCAL_MODELS: dict[str, str] = {
    "minilm": "float",
    "minilm-q8": "q8",
    "minilm-q8t": "q8t",
    "minilm-q8s": "q8s",
}

# Local models whose queries are embedded by another local model: the same network, so the
# vectors compare. "minilm-q8s" embeds stored memories in int8 (many texts, throughput) and
# queries in float (one text a recall, accuracy).
# Why: docs/decisions/0033-embedding-model-minilm-q8s.md.
_QUERY_MODELS: dict[str, str] = {"minilm-q8s": "minilm"}


def interchangeable(a: str, b: str) -> bool:
    """Whether vectors stored by model `a` may be searched with model `b`'s: the same
    model, or a local model and its query model (`minilm-q8s` memories are searched with
    float queries already; float memories are within cos ~0.999 of its own). A store
    made with the float default before `minilm-q8s` then keeps working."""
    if a == b:
        return True
    prefix = f"{LOCAL_PROVIDER}/"
    if not (a.startswith(prefix) and b.startswith(prefix)):
        return False
    x, y = a[len(prefix) :], b[len(prefix) :]
    return _QUERY_MODELS.get(x) == y or _QUERY_MODELS.get(y) == x


# Well-known hosted dimensions so ``Embedder.dim`` answers without a network round trip.
_KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}


def local_models() -> list[str]:
    """The full names of the local models (`pcm-local/...`)."""
    return [f"{LOCAL_PROVIDER}/{name}" for name in _LOCAL_MODELS]


def _embed_local(name: str, texts: list[str]) -> list[list[float]]:
    """The local provider's embeddings (`name` without the `pcm-local/` prefix)."""
    if name not in _LOCAL_MODELS:
        known = sorted(_LOCAL_MODELS)
        raise ValueError(f"unknown {LOCAL_PROVIDER} model {name!r}; known: {known}")
    vecs: list[list[float]] = local_minilm.embed(texts, variant=_LOCAL_MODELS[name]).tolist()
    return vecs


def register_local_provider() -> None:
    """Register ``pcm-local`` with litellm (through the gateway); idempotent, thread-safe."""
    gateway.register_embedding_provider(LOCAL_PROVIDER, _LOCAL_MODELS, _embed_local)


def _ensure_provider(model: str) -> None:
    if model.startswith(f"{LOCAL_PROVIDER}/"):
        register_local_provider()


def known_dim(model: str) -> int | None:
    """Output dimension of ``model`` if known without calling it."""
    if model.startswith(f"{LOCAL_PROVIDER}/"):
        name = model.split("/", 1)[1]
        return local_minilm.DIM if name in _LOCAL_MODELS else None
    base = model.rsplit("/", 1)[-1].split(":", 1)[0]  # "ollama/nomic-embed-text:latest"
    return _KNOWN_DIMS.get(base)


class Embedder:
    """The single entry point services use to embed text.

    ``litellm_kwargs`` are passed to every ``litellm.aembedding`` call (``api_base``,
    ``api_key``, ``dimensions``, ``timeout``, ...). ``dim`` may be given for models whose
    dimension is not known in advance; otherwise it is learned from the first response.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = 64,
        max_chars: int = 20000,
        *,
        dim: int | None = None,
        **litellm_kwargs: Any,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if max_chars < 1:
            raise ValueError("max_chars must be >= 1")
        self.model = model
        self.batch_size = batch_size
        self.max_chars = max_chars
        self._litellm_kwargs = litellm_kwargs
        self._dim = dim or known_dim(model)
        self._query: Embedder | None = None
        _ensure_provider(model)

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise RuntimeError(
                f"dimension of {self.model!r} unknown: pass dim= or call embed() once first"
            )
        return self._dim

    def _prepare(self, text: str) -> str:
        text = text[: self.max_chars]
        # Hosted APIs reject empty strings; a single space embeds as "nothing" everywhere.
        return text if text.strip() else " "

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in order. Batches hold texts of similar length to cut padding."""
        if not texts:
            return []
        prepared = [self._prepare(t) for t in texts]
        order = sorted(range(len(prepared)), key=lambda i: len(prepared[i]))
        out: list[list[float] | None] = [None] * len(prepared)
        # The local model takes the whole sorted list in one call (it runs it `RUN_TEXTS`
        # at a time itself), sparing litellm's own work per call
        # (docs/decisions/0037-litellm-local-call-overhead.md). `batch_size` is for hosted APIs.
        step = len(order) if self.is_local else self.batch_size
        for start in range(0, len(order), step):
            idx = order[start : start + step]
            vecs = await gateway.embed(
                self.model,
                [prepared[i] for i in idx],
                local=self.is_local,
                **self._litellm_kwargs,
            )
            if len(vecs) != len(idx):
                raise RuntimeError(
                    f"{self.model} returned {len(vecs)} embeddings for {len(idx)} inputs"
                )
            for i, v in zip(idx, vecs, strict=True):
                out[i] = v
        if self._dim is None:
            self._dim = len(out[0] or [])
        return [v for v in out if v is not None]

    async def embed_one(self, text: str) -> list[float]:
        """One text to store (a memory's vector): as `embed` gives it."""
        return (await self.embed([text]))[0]

    @property
    def query_model(self) -> str:
        """The model that embeds queries: `model` itself, except for a local model that
        has a query model of its own (`_QUERY_MODELS`)."""
        if self.is_local:
            name = _QUERY_MODELS.get(self.model.split("/", 1)[1])
            if name is not None:
                return f"{LOCAL_PROVIDER}/{name}"
        return self.model

    @property
    def is_local(self) -> bool:
        """A model of this package (no network call, nothing paid)."""
        return self.model.startswith(f"{LOCAL_PROVIDER}/")

    async def embed_query(self, text: str) -> list[float]:
        """One search query's vector, compared with stored vectors (by `query_model`)."""
        return (await self.embed_queries([text]))[0]

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed_query` of each text, in order."""
        if self._query is None:
            model = self.query_model
            self._query = (
                self
                if model == self.model
                else Embedder(model, self.batch_size, self.max_chars, **self._litellm_kwargs)
            )
        return await self._query.embed(texts)
