"""The litellm gateway (DESIGN §8): the one PCM module that imports litellm.

Every model call (chat completions for the LLM extractor and judge, embeddings, hosted
rerankers) and every change to litellm's global state (the local embedding provider, its
zero-cost model entries) goes through here, with plain Python types at the boundary.

Importing this module imports litellm (a second or more of CPU), so modules that load a model
only on demand import it where they need it, as they did litellm itself.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypedDict

# litellm fetches its model cost map from the network at import unless told otherwise; the
# import below is PCM's only one, so this default holds for every process.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # after the environment default above
from litellm.llms.custom_llm import CustomLLM
from litellm.types.rerank import RerankResponse
from litellm.types.utils import EmbeddingResponse, ModelResponse, Usage


class ChatMessage(TypedDict):
    role: str
    content: str


# A local provider's embedding function: (model name without the provider prefix, texts)
# -> one vector per text. It runs in a worker thread for async calls.
EmbedFn = Callable[[str, list[str]], list[list[float]]]


async def complete(model: str, messages: Sequence[ChatMessage], **options: Any) -> str:
    """The text of a chat model's first choice ("" when it gave none). `options` go to
    `litellm.acompletion` as they are (temperature, timeout, response_format, api_base,
    mock_response, ...)."""
    resp = await litellm.acompletion(model=model, messages=list(messages), **options)
    if not isinstance(resp, ModelResponse):  # a stream: only with stream=True, never asked
        raise TypeError(f"{model} answered with a stream")
    content = resp.choices[0].message.content
    return content if isinstance(content, str) else ""


async def embed(
    model: str, texts: list[str], *, local: bool = False, **options: Any
) -> list[list[float]]:
    """One vector per text, in order, through `litellm.aembedding`. `local`: a model of a
    provider registered here, whose calls skip litellm's logging when nothing listens."""
    with _unlogged() if local else nullcontext():
        resp = await litellm.aembedding(model=model, input=texts, **options)
    return _vectors(resp)


async def rerank(
    model: str, query: str, documents: list[str], **options: Any
) -> list[tuple[int, float]]:
    """(index in `documents`, relevance score as the provider gives it) for each result."""
    docs: list[str | dict[str, object]] = list(documents)
    resp = await litellm.arerank(
        model=model,
        query=query,
        documents=docs,
        top_n=len(docs),
        return_documents=False,
        **options,
    )
    if not isinstance(resp, RerankResponse):  # litellm's annotation covers its sync form too
        raise TypeError(f"{model} gave no rerank response")
    out: list[tuple[int, float]] = []
    for result in resp.results or []:
        # Some providers give objects rather than dicts; both read the same way.
        item = result if isinstance(result, dict) else dict(result)
        out.append((int(item["index"]), float(item["relevance_score"])))
    return out


def _vectors(response: EmbeddingResponse) -> list[list[float]]:
    # Providers return dicts or Embedding objects; order by index to be safe.
    items = sorted(
        response.data,
        key=lambda d: d["index"] if isinstance(d, dict) else getattr(d, "index", 0),
    )
    out: list[list[float]] = []
    for d in items:
        vec = d["embedding"] if isinstance(d, dict) else d.embedding
        out.append([float(x) for x in vec])
    return out


def _listened() -> bool:
    """Whether anything is registered with litellm to hear about calls (callbacks, loggers)."""
    return any(
        getattr(litellm, name, None)
        for name in (
            "callbacks",
            "input_callback",
            "success_callback",
            "failure_callback",
            "_async_success_callback",
            "_async_failure_callback",
            "service_callback",
        )
    )


def _unlogged() -> AbstractContextManager[None]:
    """A local model's call without litellm's success logging when nothing listens for it.

    litellm builds a full logging payload after every call even with no callback
    registered, on the recall path too (docs/decisions/0037-litellm-local-call-overhead.md).
    Its context for nested sub-calls skips
    that; it is litellm's internal module, so a litellm without it or any registered
    callback keeps the ordinary path."""
    if _listened():
        return nullcontext()
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:
        return nullcontext()
    return internal_sub_call()


def _as_texts(provider: str, input: list[Any]) -> list[str]:
    # The OpenAI embedding API also allows token-id lists; a local model only takes text.
    texts = [t for t in input if isinstance(t, str)]
    if len(texts) != len(input):
        raise ValueError(f"{provider} embeddings take a list of strings")
    return texts


class _LocalEmbeddings(CustomLLM):
    """A litellm custom provider computing embeddings in process; async calls run the CPU
    work off the event loop."""

    def __init__(self, provider: str, embed: EmbedFn) -> None:
        super().__init__()
        self.provider = provider
        self._embed = embed

    def _fill(self, model: str, texts: list[str], response: EmbeddingResponse) -> EmbeddingResponse:
        # litellm passes the model without the provider prefix; accept either form.
        name = model.removeprefix(f"{self.provider}/")
        vecs = self._embed(name, texts)
        response.model = f"{self.provider}/{name}"
        response.data = [
            {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)
        ]
        response.usage = Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
        # A stamped cost is used as is: litellm otherwise priced each local call again
        # (docs/decisions/0037-litellm-local-call-overhead.md).
        response._hidden_params["response_cost"] = 0.0
        return response

    # The signatures are litellm's (CustomLLM's), which leaves most parameters untyped.
    def embedding(
        self,
        model: str,
        input: list[Any],
        model_response: EmbeddingResponse,
        print_verbose: Callable[..., Any],
        logging_obj: Any,
        optional_params: dict[str, Any],
        api_key: str | None = None,
        api_base: str | None = None,
        timeout: Any = None,
        litellm_params: Any = None,
    ) -> EmbeddingResponse:
        return self._fill(model, _as_texts(self.provider, input), model_response)

    async def aembedding(
        self,
        model: str,
        input: list[Any],
        model_response: EmbeddingResponse,
        print_verbose: Callable[..., Any],
        logging_obj: Any,
        optional_params: dict[str, Any],
        api_key: str | None = None,
        api_base: str | None = None,
        timeout: Any = None,  # noqa: ASYNC109 - litellm's signature; the call is local
        litellm_params: Any = None,
    ) -> EmbeddingResponse:
        texts = _as_texts(self.provider, input)
        return await asyncio.to_thread(self._fill, model, texts, model_response)


_register_lock = threading.Lock()


def register_embedding_provider(provider: str, models: Iterable[str], embed: EmbedFn) -> None:
    """Serve `provider/<model>` embeddings by `embed`, each model priced at zero;
    idempotent (a provider already registered is left as it is) and thread-safe."""
    with _register_lock:
        if any(item.get("provider") == provider for item in litellm.custom_provider_map):
            return
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": provider, "custom_handler": _LocalEmbeddings(provider, embed)},
        ]
        # Priced at zero in litellm's cost map: each call prices its response, and for a
        # model missing from the map that meant trying every name generalisation first
        # (docs/decisions/0037-litellm-local-call-overhead.md).
        litellm.register_model(
            {
                f"{provider}/{name}": {
                    "litellm_provider": provider,
                    "mode": "embedding",
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "cache_read_input_token_cost": 0.0,
                }
                for name in models
            }
        )
