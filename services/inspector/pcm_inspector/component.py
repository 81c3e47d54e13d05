"""The inspector as a component of a PCM process: the UI and its read-only routes."""

from __future__ import annotations

from fastapi import FastAPI

from pcm_common.runtime.service import Component
from pcm_inspector.api import router
from pcm_inspector.ui import mount_ui


class InspectorComponent(Component):
    name = "inspector"

    def attach(self, app: FastAPI) -> None:
        app.include_router(router)
        mount_ui(app)
