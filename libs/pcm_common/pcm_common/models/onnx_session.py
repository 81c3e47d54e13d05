"""What PCM uses of an `onnxruntime.InferenceSession`: onnxruntime ships no type
information, so its sessions are typed by this protocol where they are held."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy.typing as npt


class OnnxInput(Protocol):
    """A graph input's description (`NodeArg`)."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...  # "tensor(int64)", ...


class OnnxSession(Protocol):
    def run(
        self, output_names: Sequence[str] | None, input_feed: Mapping[str, npt.NDArray[Any]]
    ) -> list[npt.NDArray[Any]]: ...

    def get_inputs(self) -> Sequence[OnnxInput]: ...
