"""Named sets of settings defaults (`PCM_PROFILE`, `pcm dev --profile NAME`).

A profile sits between the explicit sources (constructor arguments, the environment) and
the fields' own defaults: it changes what an unset setting means, never what was set. Each
settings class takes the entries of the profile that name one of its fields, so one table
serves every service. The values are settings the code reads today (docs/configuration.md);
the README's profile table mirrors them.
"""

from __future__ import annotations

from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

# One machine, small footprint: the embedded store, the in-package models and rule-based
# judge and extractor, and no helper processes or large in-memory caches.
STARTER: dict[str, Any] = {
    "embedding_model": "pcm-local/minilm-q8s",
    "extractor": "local",
    "surprisal_judge": "local",
    # Screens in a thread rather than a pool of worker processes (start-up, memory).
    "firewall_workers": 0,
    "batch_readers": 1,
    "consumer_concurrency": 1,
    "qdrant_optimize_in_child": False,
    # ~16 MB of payloads instead of ~80 MB; the mirror still holds a 50k-memory tenant.
    "qdrant_payload_cache": 2_000,
    "qdrant_dense_mirror": 50_000,
}

# One machine with cores and memory to spare: still embedded and local models, with more
# work in flight and larger caches (both measured to help, docs/benchmarks.md).
LOCAL_PERFORMANCE: dict[str, Any] = {
    "embedding_model": "pcm-local/minilm-q8s",
    "extractor": "local",
    "surprisal_judge": "local",
    "firewall_workers": 4,
    "batch_readers": 2,
    "consumer_concurrency": 4,
    "qdrant_payload_cache": 50_000,
    "qdrant_dense_mirror": 500_000,
}

# Replicas over external servers (Redis, a Qdrant server, a Bolt graph server), which the
# profile cannot guess: they must be named (`SERVER_SETTINGS`). Extraction and judging go
# to language models through litellm, with more calls and events in flight.
SCALE: dict[str, Any] = {
    "embedding_model": "pcm-local/minilm-q8s",
    "extractor": "llm",
    "extraction_concurrency": 16,
    "surprisal_judge": "llm",
    "surprisal_concurrency": 16,
    "firewall_workers": 4,
    "batch_max": 128,
    "batch_readers": 4,
    "consumer_concurrency": 8,
}

PROFILES: dict[str, dict[str, Any]] = {
    "starter": STARTER,
    "local-performance": LOCAL_PERFORMANCE,
    "scale": SCALE,
}

# Field -> the variable that names it, for the profiles that need servers.
SERVER_SETTINGS = {"redis_url": "REDIS_URL", "qdrant_url": "QDRANT_URL", "neo4j_uri": "NEO4J_URI"}
NEEDS_SERVERS = frozenset({"scale"})


def unknown_profile(name: str) -> str:
    return f"unknown profile {name!r}: one of {', '.join(PROFILES)} (or empty for none)"


def missing_servers(name: str, given: set[str], values: dict[str, Any]) -> str | None:
    """Why profile `name` cannot start with these settings, or None."""
    if name not in NEEDS_SERVERS:
        return None
    missing = [env for f, env in SERVER_SETTINGS.items() if f not in given or not values.get(f)]
    if not missing:
        return None
    return (
        f"profile {name!r} runs on external servers: set {', '.join(missing)} "
        "(or choose the embedded profile 'starter' or 'local-performance')"
    )


class ProfileSource(PydanticBaseSettingsSource):
    """The chosen profile's values for the fields `settings_cls` has. The profile's name is
    read from the explicit sources, in their order, so `profile=` beats `PCM_PROFILE`."""

    def __init__(
        self, settings_cls: type[BaseSettings], explicit: tuple[PydanticBaseSettingsSource, ...]
    ) -> None:
        super().__init__(settings_cls)
        self._explicit = explicit

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Unused: __call__ returns the whole mapping at once.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        name: Any = None
        for source in self._explicit:
            name = source().get("profile")
            if name is not None:
                break
        # An unknown name contributes nothing here; the `profile` field refuses it.
        values = PROFILES.get(str(name or "").strip().lower(), {})
        fields = self.settings_cls.model_fields
        return {k: v for k, v in values.items() if k in fields}
