"""Build the configured extractor (local spaCy rules or an LLM through litellm)."""

from __future__ import annotations

from typing import Any

from pcm_common.extract import Extractor
from pcm_common.runtime.config import PcmSettings


def build_extractor(
    kind: str,
    model: str = "",
    *,
    api_base: str = "",
    attempts: int = 3,
    concurrency: int = 8,
    **litellm_kwargs: Any,
) -> Extractor:
    if kind == "local":
        from pcm_common.extract.local import LocalExtractor

        return LocalExtractor()
    if kind == "llm":
        from pcm_common.extract.llm import LlmExtractor

        if not model:
            raise ValueError("extractor=llm needs an extraction model (PCM_EXTRACTION_MODEL)")
        if api_base:
            litellm_kwargs["api_base"] = api_base
        return LlmExtractor(model, max_attempts=attempts, concurrency=concurrency, **litellm_kwargs)
    raise ValueError(f"unknown extractor {kind!r} (local | llm)")


def extractor_from(settings: PcmSettings) -> Extractor:
    """The extractor a service's settings configure (`PCM_EXTRACTOR`, ...)."""
    return build_extractor(
        settings.extractor,
        settings.extraction_model,
        api_base=settings.extraction_api_base,
        attempts=settings.extraction_attempts,
        concurrency=settings.extraction_concurrency,
    )
