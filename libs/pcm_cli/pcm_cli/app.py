"""Composition: which components run in a process."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component, create_app
from pcm_graph_extractor.component import GraphExtractorComponent
from pcm_ingest.component import IngestComponent
from pcm_inspector.component import InspectorComponent
from pcm_recall.component import RecallComponent
from pcm_sweeper.component import SweeperComponent

COMPONENTS: dict[str, Callable[[Resources], Component]] = {
    "ingest": IngestComponent,
    "recall": RecallComponent,
    "graph-extractor": GraphExtractorComponent,
    "sweeper": SweeperComponent,
}
# Not services (nothing to scale, no port of their own): part of `pcm dev`. The inspector
# is the browser UI at /ui and its read-only routes (docs/inspector.md).
ADDONS: dict[str, Callable[[Resources], Component]] = {"inspector": InspectorComponent}
DEFAULT_PORTS = {"ingest": 8081, "recall": 8082, "graph-extractor": 8083, "sweeper": 8084}


def build_app(names: list[str], settings: PcmSettings | None = None) -> FastAPI:
    res = Resources(settings or PcmSettings())
    known = {**COMPONENTS, **ADDONS}
    components = [known[n](res) for n in names]
    title = "PCM" if len(names) > 1 else f"PCM {names[0]}"
    return create_app(res, components, title)


def dev_app() -> FastAPI:
    """All four services and the inspector in one process (the embedded default)."""
    return build_app([*COMPONENTS, *ADDONS])
