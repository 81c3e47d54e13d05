"""The browser UI: static files under `/ui/static`, and the one page for every other
`/ui` path (the page routes itself in the browser, so a memory's URL can be typed or
shared). Nothing here reads data: the page calls the HTTP API with the user's key."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
VENDOR = STATIC / "vendor"
# Scripts and styles from this server only: nothing is fetched from elsewhere, and a
# memory's text can never run as script. uPlot and Cytoscape set styles from script.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
MISSING_ASSETS = """<!doctype html><html lang="en"><meta charset="utf-8">
<title>PCM inspector</title><body><h1>PCM inspector</h1><p role="alert">The inspector's
browser libraries are not installed. Run <code>make install</code> (it runs
<code>scripts/inspector_assets.sh</code>) and reload this page.</p></body></html>"""


def _page() -> Response:
    if not (VENDOR / "uPlot.iife.min.js").exists():
        return HTMLResponse(MISSING_ASSETS, status_code=503, headers=HEADERS)
    return FileResponse(STATIC / "index.html", headers={**HEADERS, "Cache-Control": "no-cache"})


def mount_ui(app: FastAPI) -> None:
    router = APIRouter(include_in_schema=False)

    @router.get("/ui")
    async def ui_root() -> Response:
        return RedirectResponse("/ui/", status_code=307)

    @router.get("/ui/{path:path}")
    async def ui_page(path: str) -> Response:
        return _page()

    # Mounted before the catch-all page route, so /ui/static/... are files.
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="inspector-static")
    app.include_router(router)
