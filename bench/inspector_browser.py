"""A memory page of the inspector in headless Chromium (Debian's, as `tests/browser`), timed
until every part is drawn: the overview and its five parts in place, and the strength
plot and the graph drawn on their canvases. Opened two ways, each page `runs` times:

- by address (`page.goto`): the browser loads the page, its modules and the libraries
  (from its cache after the first), then the data; measured from the navigation's start;
- through a link inside the inspector (a click, as on a linked memory): the data only,
  measured from the click.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from typing import Any

from bench.common import log, median, pct

CHROMIUM = os.environ.get("PCM_CHROMIUM", "/usr/bin/chromium")

# Truthy (ms since `window.__t0`, else since navigation) once memory `id` is fully drawn.
DRAWN = """(id) => {
  const main = document.getElementById("main");
  const shown = [...main.querySelectorAll("dl.facts dd")].some((d) => d.textContent === id);
  const parts = main.querySelectorAll("section.card").length >= 6;
  const boxes = [...main.querySelectorAll("#strength-plot, #graph-view")];
  const drawn = boxes.every((b) => b.querySelector("canvas"));
  return shown && parts && drawn ? Math.max(0.01, performance.now() - (window.__t0 || 0)) : false;
}"""
CLICK = """(id) => {
  const a = document.createElement("a");
  a.href = `/ui/memories/${id}`;
  document.body.append(a);
  window.__t0 = performance.now();
  a.click();
  a.remove();
}"""
PROBLEMS = "() => document.querySelectorAll('#main .problem').length"


def _stats(xs: Sequence[float]) -> dict[str, float]:
    return {"p50": round(median(xs), 1), "p95": round(pct(xs, 95), 1), "max": round(max(xs), 1)}


async def browser_pages(url: str, key: str, ids: Sequence[str], runs: int) -> dict[str, Any] | None:
    if not shutil.which(CHROMIUM):
        log(f"  no Chromium at {CHROMIUM}: browser timings skipped (scripts/chromium.sh)")
        return None
    from playwright.async_api import async_playwright

    by_address: list[float] = []
    by_link: list[float] = []
    problems = 0
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        await context.add_init_script(
            f"sessionStorage.setItem('pcm-inspector-key', {json.dumps(key)})"
        )
        page = await context.new_page()
        page.set_default_timeout(60_000)
        for mid in ids[:2]:  # warm-up: the scripts into the cache, the server's first calls
            await page.goto(f"{url}/ui/memories/{mid}")
            await page.wait_for_function(DRAWN, arg=mid)
        for _ in range(runs):
            for mid in ids:
                await page.goto(f"{url}/ui/memories/{mid}")
                drawn = await page.wait_for_function(DRAWN, arg=mid)
                by_address.append(float(await drawn.json_value()))
                problems += int(await page.evaluate(PROBLEMS))
            for mid in ids:
                await page.evaluate(CLICK, mid)
                drawn = await page.wait_for_function(DRAWN, arg=mid)
                by_link.append(float(await drawn.json_value()))
                problems += int(await page.evaluate(PROBLEMS))
        await browser.close()
    return {
        "pages": len(by_address),
        "by_address_ms": _stats(by_address),
        "by_link_ms": _stats(by_link),
        "parts_failed": problems,
    }
