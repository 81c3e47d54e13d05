"""`HashEmbedder`: deterministic dense vectors without a model, for unit tests.

Each lower-cased word adds a fixed pseudo-random unit direction (from its hash), so texts
with the same words get cosine 1 whatever their punctuation, and each word one text has
and the other lacks lowers it (two texts of ten words sharing nine: ~0.9). Enough for the
write path's rules (exact copies, near duplicates at a threshold); not for ranking."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+(?:[:.,/-]\w+)*")


class HashEmbedder:
    is_local = True

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model = f"test/hash-{dim}"
        self.calls: list[int] = []  # texts per embed call (tests check what was embedded)

    def vector(self, text: str) -> list[float]:
        total = np.zeros(self.dim)
        for word in _WORD.findall(text.lower()):
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            total += np.random.default_rng(seed).standard_normal(self.dim)
        norm = math.sqrt(float(total @ total))
        return [float(x) / norm for x in total] if norm else [0.0] * self.dim

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [self.vector(t) for t in texts]

    async def embed_one(self, text: str) -> list[float]:
        (vec,) = await self.embed([text])
        return vec

    async def embed_query(self, text: str) -> list[float]:
        return self.vector(text)

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]
