"""Extraction port: text -> entities and relations."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from pcm_common.stores.graph.port import Extraction


class Extractor(ABC):
    @abstractmethod
    async def extract(self, text: str) -> Extraction: ...

    async def extract_many(self, texts: list[str]) -> list[Extraction]:
        """Batch form; implementations override it with a cheaper batched path."""
        return list(await asyncio.gather(*(self.extract(t) for t in texts)))
