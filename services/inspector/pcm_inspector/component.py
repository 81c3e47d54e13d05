"""The inspector in a PCM process: the browser UI at /ui (`InspectorComponent`, the
`inspector` service) and the routes it calls beyond the memory API (`InspectorApiComponent`).

The routes extend the memory API (`/v1/memories/{id}/strength`, `/v1/memories:search`, ...),
so they are served beside it by ingest (`pcm_cli.app`), and a path router that sends
`/v1/memories` to ingest sends them there too; the UI is static files and reads no data, so
`pcm serve inspector` is the UI alone (its own small deployment in deploy/k8s)."""

from __future__ import annotations

from fastapi import FastAPI

from pcm_common.runtime.service import Component
from pcm_inspector.api import router
from pcm_inspector.ui import mount_ui


class InspectorComponent(Component):
    name = "inspector"

    def attach(self, app: FastAPI) -> None:
        mount_ui(app)


class InspectorApiComponent(Component):
    name = "inspector-api"

    def attach(self, app: FastAPI) -> None:
        app.include_router(router)
