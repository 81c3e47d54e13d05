"""A real headless Chromium (Debian's package, at /usr/bin/chromium; no test tool downloads
a browser) driven by Playwright against the session's real PCM server, and the memories
the inspector's tests look at."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.conftest import RUN
from tests.inspector_data import seed_routines

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "inspector"
CHROMIUM = os.environ.get("PCM_CHROMIUM", "/usr/bin/chromium")
LEAKED = re.compile(r"\b(null|undefined|NaN|\[object Object\])\b")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not shutil.which(CHROMIUM):
        # `make test` installs it (scripts/chromium.sh); CI must not pass without it.
        if os.environ.get("CI"):
            pytest.fail(f"no Chromium at {CHROMIUM}: run scripts/chromium.sh")
        pytest.skip(f"no Chromium at {CHROMIUM} (scripts/chromium.sh installs Debian's)")
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        await b.close()


@dataclass
class Inspector:
    """A signed-in page on the inspector, and every URL it asked for."""

    page: Page
    base: str
    requested: list[str]

    async def shot(self, name: str) -> Path:
        # A value the page failed to render shows as such a word (no seeded text has one).
        shown = await self.page.locator("main").inner_text()
        assert not LEAKED.search(shown), LEAKED.findall(shown)
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path


async def open_page(
    browser: Browser, base: str, *, width: int = 1280, height: int = 900
) -> Inspector:
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    page.set_default_timeout(30_000)
    insp = Inspector(page, base, [])
    page.on("request", lambda r: insp.requested.append(r.url))
    return insp


async def sign_in(insp: Inspector, key: str) -> None:
    await insp.page.goto(f"{insp.base}/ui/")
    await insp.page.fill("#key", key)
    await insp.page.keyboard.press("Enter")  # the form submits from the keyboard
    await insp.page.wait_for_url("**/ui/memories")


@pytest.fixture
async def inspector(browser: Browser, pcm_url: str) -> AsyncIterator[Inspector]:
    insp = await open_page(browser, pcm_url)
    yield insp
    await insp.page.context.close()
    # Scripts, styles and data come from PCM only: nothing from a CDN or anywhere else.
    foreign = [u for u in insp.requested if not u.startswith((pcm_url, "data:"))]
    assert not foreign, foreign


@dataclass(frozen=True)
class Seeded:
    works: str  # "Marta Kowalski works at Nordlys Robotics in Tallinn."
    moved: str
    umbrella: str  # the one to forget
    other_tenant: str  # tenant B's memory


SEED = [
    f"Marta Kowalski works at Nordlys Robotics in Tallinn. ({RUN})",
    f"Marta Kowalski moved to Tallinn in April. ({RUN})",
    f"Marta Kowalski keeps a spare umbrella at the Nordlys Robotics office. ({RUN})",
]


@pytest.fixture(scope="session")
async def seeded(pcm_url: str) -> Seeded:
    headers_a = {"Authorization": "Bearer key-a"}
    async with httpx.AsyncClient(base_url=pcm_url, headers=headers_a, timeout=60) as a:
        got = await a.post("/v1/memories:batch", json={"memories": [{"text": t} for t in SEED]})
        assert got.status_code == 201, got.text
        ids = [r["id"] for r in got.json()["results"]]
        # Enough memories for more than one page of the list (25).
        notes = [
            {"text": f"Reading list, item {i}: chapter {i + 3} of the field guide."}
            for i in range(12)
        ]
        assert (await a.post("/v1/memories:batch", json={"memories": notes})).status_code == 201
        async with httpx.AsyncClient(
            base_url=pcm_url, headers={"Authorization": "Bearer key-b"}, timeout=60
        ) as b:
            other = await b.post(
                "/v1/memories", json={"text": f"Tenant B plans the Oslo offsite. ({RUN})"}
            )
            assert other.status_code == 201, other.text
        await seed_routines(a, f"browser-{RUN}")  # settles: entities extracted, all judged
    return Seeded(works=ids[0], moved=ids[1], umbrella=ids[2], other_tenant=other.json()["id"])
