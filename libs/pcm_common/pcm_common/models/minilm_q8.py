"""An int8 copy of the packaged MiniLM graph, made on this machine at first use.

The packaged "int8" graph stores its weights as int8 but turns them back into float32
(Cast, Mul) before every MatMul, so it computes in float32 (~3 ms of CPU per short text).
Here the stored weights are folded into float32 once (onnxruntime's basic graph
optimisation, saved to a file) and the result is quantized dynamically
(`onnxruntime.quantization.quantize_dynamic`: int8 weights per output channel, uint8
activations scaled per run): MatMulInteger runs about twice as fast. Nothing is
downloaded; the copy is derived from the installed package's file.

Dynamic quantization scales each activation tensor by its range over the whole run, so
texts embedded in one run would shift each other's vectors (cos ~0.98 between a text
embedded alone and in a batch of 16). Callers therefore run this graph one text at a time:
a text then always gets the same vector, whatever else is being embedded.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path

# Bump when the recipe below changes: the cached copy is named after it and the source.
RECIPE = "dyn-q8-perchannel-v1"

_lock = threading.Lock()


def cache_dir() -> Path:
    """PCM_MODEL_CACHE, else $XDG_CACHE_HOME/pcm/models, else ~/.cache/pcm/models."""
    env = os.environ.get("PCM_MODEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pcm" / "models"


def _source_key(src: Path) -> str:
    """Digest of the source graph, the recipe and onnxruntime's version (its quantizer's
    output may differ between versions), so any change makes a new copy."""
    import onnxruntime as ort

    h = hashlib.sha256()
    with src.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    h.update(f"{RECIPE}|{ort.__version__}".encode())
    return h.hexdigest()[:16]


def quantized_path(src: Path) -> Path:
    """The int8 copy of `src`, made now if this machine has none yet. Safe across threads
    and processes: each maker writes its own temporary files and renames the result into
    place atomically, so a reader never sees a partial graph."""
    target = cache_dir() / f"minilm-{RECIPE}-{_source_key(src)}.onnx"
    if target.exists():
        return target
    with _lock:
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            _make(src, target)
    return target


def _make(src: Path, target: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".minilm-q8-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        opts = ort.SessionOptions()
        # Basic = constant folding and redundant-node removal only: standard ONNX ops that
        # the quantizer understands (the fused ops of higher levels are not all quantized).
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(src), sess_options=opts, providers=["CPUExecutionProvider"])
        out = Path(tmp) / "q8.onnx"
        # Per-channel weights: per-tensor scales cost far more accuracy (mean cos to the
        # float graph 0.962 against 0.993, 1,024 synthetic memories).
        quantize_dynamic(folded, out, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(out, target)
