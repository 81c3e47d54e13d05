"""Extraction port: text -> entities and relations."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pcm_common.stores.graph import Extraction


class Extractor(ABC):
    @abstractmethod
    async def extract(self, text: str) -> Extraction: ...
