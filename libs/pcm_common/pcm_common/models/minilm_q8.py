"""Int8 copies of the packaged MiniLM graph, made on this machine at first use.

The packaged "int8" graph stores its weights as int8 but turns them back into float32
(Cast, Mul) before every MatMul, so it computes in float32.
Here the stored weights are folded into float32 once (onnxruntime's basic graph
optimisation, saved to a file) and the result is quantized dynamically
(`onnxruntime.quantization.quantize_dynamic`: int8 weights per output channel, uint8
activations scaled per run): MatMulInteger runs about twice as fast. Nothing is
downloaded; the copy is derived from the installed package's file.

Dynamic quantization scales each activation tensor by its range over the whole run, so
texts embedded in one run would shift each other's vectors. Callers therefore run this graph
one text at a time: a text then always gets the same vector, whatever else is being
embedded.

The per-token copy (`per_token_path`, the `minilm-q8t` model) quantizes each token's
activations by its own range instead (symmetric, uint8 around 128: MatMulInteger takes one
zero point per tensor, and per-row scales multiply its int32 output). One token's scale no
longer depends on the rest of the run, so texts are batched (16 a run, the same vectors as
alone), and an outlier token no longer coarsens every other token's values.
Measurements of both copies: docs/decisions/0034-minilm-int8-graphs.md.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Bump when a recipe below changes: the cached copy is named after it and the source.
RECIPE = "dyn-q8-perchannel-v1"
PER_TOKEN_RECIPE = "dyn-q8-pertoken-v1"

_lock = threading.RLock()  # the per-token copy makes the per-tensor one first


def cache_dir() -> Path:
    """PCM_MODEL_CACHE, else $XDG_CACHE_HOME/pcm/models, else ~/.cache/pcm/models."""
    env = os.environ.get("PCM_MODEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pcm" / "models"


def _source_key(src: Path, recipe: str) -> str:
    """Digest of the source graph, the recipe and onnxruntime's version (its quantizer's
    output may differ between versions), so any change makes a new copy."""
    import onnxruntime as ort

    h = hashlib.sha256()
    with src.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    h.update(f"{recipe}|{ort.__version__}".encode())
    return h.hexdigest()[:16]


def quantized_path(src: Path) -> Path:
    """The int8 copy of `src`, made now if this machine has none yet. Safe across threads
    and processes: each maker writes its own temporary files and renames the result into
    place atomically, so a reader never sees a partial graph."""
    return cached(src, RECIPE, _make)


def per_token_path(src: Path) -> Path:
    """The per-token int8 copy of `src` (made from the per-tensor one), as `quantized_path`.
    Open it with ONNX Runtime's basic graph optimisations only: the extended level's
    MatMulIntegerToFloat fusion assumes one activation scale per tensor (`local_minilm`)."""
    return cached(src, PER_TOKEN_RECIPE, lambda s, t: per_token(quantized_path(s), t))


def cached(src: Path, recipe: str, make: Callable[[Path, Path], None], *, name: str = "") -> Path:
    """The copy of `src` by `recipe`, made by `make(src, out)` into a temporary folder of
    its own (for any intermediate files too) and renamed into place. The file is named
    after `name` (default: `recipe`) and a digest of the source and `recipe`."""
    target = cache_dir() / f"minilm-{name or recipe}-{_source_key(src, recipe)}.onnx"
    if target.exists():
        return target
    with _lock:
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".minilm-") as tmp:
                out = Path(tmp) / "out.onnx"
                make(src, out)
                os.replace(out, target)
    return target


def _make(src: Path, out: Path) -> None:
    folded = out.with_name("folded.onnx")
    fold(src, folded)
    quantize(folded, out)


class _NoPreprocessAdvice(logging.Filter):
    """The quantizer advises shape pre-processing on the root logger at every call; the
    graphs here need none (their MatMul weights are constants of known shape)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantize(src: Path, out: Path, exclude: Sequence[str] = ()) -> None:
    """Dynamic int8 quantization of `src`'s MatMuls but the nodes named in `exclude`:
    int8 weights per output channel (per-tensor scales cost far more accuracy:
    docs/decisions/0034-minilm-int8-graphs.md), activations scaled at run time."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quiet = _NoPreprocessAdvice()
    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        quantize_dynamic(
            src, out, weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=list(exclude)
        )
    finally:
        root.removeFilter(quiet)


def fold(src: Path, out: Path) -> None:
    """`src` with its stored weights folded into float32 constants."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    # Basic = constant folding and redundant-node removal only: standard ONNX ops that
    # the quantizer understands (the fused ops of higher levels are not all quantized).
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.optimized_model_filepath = str(out)
    ort.InferenceSession(str(src), sess_options=opts, providers=["CPUExecutionProvider"])


def _check_consumers(graph: Any) -> None:
    """The pattern the rewrite relies on: each DynamicQuantizeLinear feeds MatMulInteger
    (its values as A, its zero point as A's) and its scale goes only into a Mul with the
    weight scale. Anything else would need its own rewrite: refuse instead."""
    users: dict[str, list[tuple[str, int]]] = {}
    for node in graph.node:
        for slot, name in enumerate(node.input):
            users.setdefault(name, []).append((node.op_type, slot))
    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            continue
        xq, scale, zero = node.output
        ok = (
            all(u == ("MatMulInteger", 0) for u in users.get(xq, []))
            and all(u == ("MatMulInteger", 2) for u in users.get(zero, []))
            and all(op == "Mul" for op, _ in users.get(scale, []))
        )
        if not ok:
            raise RuntimeError(f"unexpected use of {node.input[0]}'s quantization")


def per_token(src: Path, out: Path) -> None:
    """Rewrite each DynamicQuantizeLinear of the per-tensor graph `src` as per-token
    symmetric quantization: scale = max|x| / 127 over the last axis, q = round(x / scale)
    + 128 as uint8, zero point 128. The scale output keeps its name, so the existing
    `Mul(scale_a, scale_w)` after each MatMulInteger now broadcasts one scale per row."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset >= 18:  # ReduceMax takes its axes as an input from opset 18 on
        raise RuntimeError(f"per-token rewrite written for opset < 18, graph has {opset}")
    _check_consumers(graph)
    graph.initializer.extend(
        numpy_helper.from_array(np.array(v, dtype=dt), name)
        for name, v, dt in (
            ("pt_127", 127.0, np.float32),
            ("pt_eps", 1e-8, np.float32),  # an all-zero row: any scale, q = 128
            ("pt_128", 128.0, np.float32),
            ("pt_zero_point", 128, np.uint8),
        )
    )
    nodes = []
    rewritten: set[str] = set()
    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        x, (xq, scale, zero) = node.input[0], node.output
        p = f"{x}_pt"
        rewritten.update((scale, zero))
        nodes += [
            helper.make_node("Abs", [x], [f"{p}_abs"]),
            helper.make_node("ReduceMax", [f"{p}_abs"], [f"{p}_max"], axes=[-1], keepdims=1),
            helper.make_node("Div", [f"{p}_max", "pt_127"], [f"{p}_s"]),
            helper.make_node("Max", [f"{p}_s", "pt_eps"], [scale]),
            helper.make_node("Div", [x, scale], [f"{p}_scaled"]),
            helper.make_node("Round", [f"{p}_scaled"], [f"{p}_round"]),
            helper.make_node("Add", [f"{p}_round", "pt_128"], [f"{p}_shift"]),
            helper.make_node("Cast", [f"{p}_shift"], [xq], to=TensorProto.UINT8),
            helper.make_node("Identity", ["pt_zero_point"], [zero]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    # Shapes recorded for the old scalar scales no longer hold.
    kept = [vi for vi in graph.value_info if vi.name not in rewritten]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
