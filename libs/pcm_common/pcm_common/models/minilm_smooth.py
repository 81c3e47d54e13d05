"""The `minilm-q8s` graph: per-token int8 MiniLM with its activations smoothed first.

A BERT-style model has a few hidden channels whose activations are far larger than the
rest. Quantizing a token's activations to int8 with one scale (`minilm_q8`'s per-token
copy) lets those channels set the scale, so every other channel of the token keeps only a
few levels. Smoothing (Xiao et al., "SmoothQuant", 2022) moves that range into the
weights, which are quantized per output channel and take it easily: for a MatMul
``X @ W``, ``X @ W == (X / s) @ (s[:, None] * W)`` for any positive per-channel ``s``;
with ``s = max|X|^a / max|W|^(1-a)`` both sides get comparable ranges. Here ``1 / s`` is
a Mul before the MatMul (one per input tensor: the query, key and value projections
share theirs) and ``s`` is folded into the weights. The maxima of ``X`` come from running
the float graph over `calibration.texts()` once, when the copy is made (on each machine:
float kernels differ slightly between CPUs, so two machines' copies may differ in a few
weights' last int8 step, as their float vectors differ in the last bits).

The feed-forward down projections stay in float: their inputs (GELU outputs, 1,536 wide)
lose the most to int8 even smoothed. Measurements (closeness to the float graph, CPU,
LoCoMo): docs/decisions/0034-minilm-int8-graphs.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pcm_common.models import calibration, minilm_q8
from pcm_common.models.onnx_session import OnnxSession

RECIPE = "dyn-q8-smooth-v1"
ALPHA = 0.65  # migration strength: 0.5 and 0.8 both kept less of the float vectors
_RUN = 16  # calibration texts per run


def smooth_path(src: Path) -> Path:
    """The smoothed per-token int8 copy of `src`, made now if this machine has none (as
    `minilm_q8.quantized_path`: safe across threads and processes). Open it with ONNX
    Runtime's basic graph optimisations only (`minilm_q8.per_token_path`)."""
    texts = calibration.texts()
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]
    # The per-token rewrite's recipe too: a change there must make a new copy here.
    key = f"{RECIPE}|{minilm_q8.PER_TOKEN_RECIPE}|a={ALPHA}|{digest}"
    return minilm_q8.cached(src, key, lambda s, out: _make(s, out, texts), name=RECIPE)


def _make(src: Path, out: Path, texts: Sequence[str]) -> None:
    folded = out.with_name("folded.onnx")
    minilm_q8.fold(src, folded)
    smoothed = out.with_name("smoothed.onnx")
    kept_float = _smooth(folded, smoothed, texts)
    quantized = out.with_name("quantized.onnx")
    minilm_q8.quantize(smoothed, quantized, exclude=kept_float)
    minilm_q8.per_token(quantized, out)


def _weighted_matmuls(graph: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """MatMul nodes by input tensor, for those whose second input is a 2-D weight."""
    inits = {i.name: i for i in graph.initializer}
    groups: dict[str, list[Any]] = {}
    for node in graph.node:
        weight = inits.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is not None and len(weight.dims) == 2:
            groups.setdefault(node.input[0], []).append(node)
    return groups, inits


def _smooth(src: Path, out: Path, texts: Sequence[str]) -> list[str]:
    """Write `src` smoothed to `out`; returns the MatMuls to keep in float (the down
    projections: more inputs than outputs), which are left as they are."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    groups, inits = _weighted_matmuls(model.graph)
    kept_float = [
        n.name
        for nodes in groups.values()
        for n in nodes
        if inits[n.input[1]].dims[0] > inits[n.input[1]].dims[1]
    ]
    wanted = {x: nodes for x, nodes in groups.items() if nodes[0].name not in kept_float}
    maxima = _activation_maxima(src, list(wanted), texts)
    nodes: list[Any] = []
    done: set[str] = set()
    for node in model.graph.node:
        x = node.input[0] if node.op_type == "MatMul" else ""
        group = wanted.get(x)
        if group is not None and x not in done:  # before the group's first MatMul
            done.add(x)
            weights = [numpy_helper.to_array(inits[n.input[1]]) for n in group]
            w_max = np.max([np.abs(w).max(axis=1) for w in weights], axis=0)
            s = _scales(maxima[x], w_max)
            inv, scaled = f"{x}_smooth_inv", f"{x}_smoothed"
            model.graph.initializer.append(numpy_helper.from_array(1.0 / s, inv))
            nodes.append(helper.make_node("Mul", [x, inv], [scaled]))
            for n, w in zip(group, weights, strict=True):
                inits[n.input[1]].CopyFrom(
                    numpy_helper.from_array((w * s[:, None]).astype(np.float32), n.input[1])
                )
                n.input[0] = scaled
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return kept_float


def _scales(x_max: npt.NDArray[np.float32], w_max: npt.NDArray[np.float32]) -> Any:
    """Per input channel: max|X|^a / max|W|^(1-a), kept within [0.01, 100] so that a
    channel the calibration barely saw is not blown up."""
    s = np.clip(x_max, 1e-5, None) ** ALPHA / np.clip(w_max, 1e-5, None) ** (1.0 - ALPHA)
    return np.clip(s, 1e-2, 1e2).astype(np.float32)


def _activation_maxima(
    src: Path, names: list[str], texts: Sequence[str]
) -> dict[str, npt.NDArray[np.float32]]:
    """Each tensor of `names`: its largest magnitude per channel (last axis) over the real
    tokens (padding left out) of `texts`, from the float graph."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from pcm_common.models import local_minilm

    probe = onnx.load(str(src))
    probe.graph.output.extend(
        helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names
    )
    opts = ort.SessionOptions()
    # No optimisation: fusions could remove the tensors asked for.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session: OnnxSession = ort.InferenceSession(
        probe.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in session.get_inputs()}
    out: dict[str, npt.NDArray[np.float32]] = {}
    for i in range(0, len(texts), _RUN):
        feeds, mask = local_minilm.feeds(texts[i : i + _RUN], inputs)
        real = mask.astype(bool)
        for name, value in zip(names, session.run(names, feeds), strict=True):
            m = np.abs(np.asarray(value)[real]).max(axis=0)
            out[name] = m if name not in out else np.maximum(out[name], m)
    return out
