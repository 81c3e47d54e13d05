"""What new memories' texts imply before they are stored: the figures they state, the
importance tier a text without one implies, the sparse lexical vector. Pure and picklable,
so a large request's derivation can run in a worker process (`firewall.runner`)."""

from __future__ import annotations

from dataclasses import dataclass

from pcm_common.domain.figures import extract_figures
from pcm_common.domain.importance import infer_importance
from pcm_common.models.sparse import encode_document
from pcm_common.stores.vectors import SparseVec


@dataclass(frozen=True)
class Derived:
    """Per new item (by its index in the request): the figures it states, the importance
    tier its text implies (where the write gave none and inference is on), its sparse
    lexical vector."""

    figures: dict[int, list[str]]
    tiers: dict[int, str]
    sparse: dict[int, SparseVec]


def derive(fresh: list[int], texts: list[str], infer: list[bool]) -> Derived:
    """`Derived` of `texts`, the items `fresh` of a request; `infer[n]`: whether the n-th
    gets an inferred importance tier."""
    return Derived(
        figures={i: extract_figures(t) for i, t in zip(fresh, texts, strict=True)},
        tiers={i: infer_importance(t) for i, t, on in zip(fresh, texts, infer, strict=True) if on},
        sparse={i: encode_document(t) for i, t in zip(fresh, texts, strict=True)},
    )
