"""Composition: which components run in a process."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.service import Component, create_app
from pcm_graph_extractor.component import GraphExtractorComponent
from pcm_ingest.component import IngestComponent
from pcm_inspector.component import InspectorApiComponent, InspectorComponent
from pcm_recall.component import RecallComponent
from pcm_sweeper.component import SweeperComponent

Factory = Callable[[Resources], Component]

# The services, each a `pcm serve <name>` process (a Deployment in deploy/k8s). The
# inspector is the browser UI at /ui: static files that call the API with the user's key
# (docs/inspector.md).
COMPONENTS: dict[str, Factory] = {
    "ingest": IngestComponent,
    "recall": RecallComponent,
    "graph-extractor": GraphExtractorComponent,
    "sweeper": SweeperComponent,
    "inspector": InspectorComponent,
}
# What a service serves besides its own component. The inspector's read-only routes (and
# the dead letters' retry) extend the memory API under the paths ingest answers
# (`/v1/memories/{id}/strength`, ...), so ingest serves them and every route to ingest
# reaches them; the UI process needs no store.
ALONGSIDE: dict[str, tuple[Factory, ...]] = {"ingest": (InspectorApiComponent,)}
DEFAULT_PORTS = {
    "ingest": 8081,
    "recall": 8082,
    "graph-extractor": 8083,
    "sweeper": 8084,
    "inspector": 8085,
}


def build_app(names: list[str], settings: PcmSettings | None = None) -> FastAPI:
    res = Resources(settings or PcmSettings())
    components = [f(res) for n in names for f in (COMPONENTS[n], *ALONGSIDE.get(n, ()))]
    title = "PCM" if len(names) > 1 else f"PCM {names[0]}"
    return create_app(res, components, title)


def dev_app() -> FastAPI:
    """Every service, the inspector included, in one process (the embedded default)."""
    return build_app(list(COMPONENTS))
