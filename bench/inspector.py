"""The inspector at 100k memories in one tenant (issue 38: "loads a memory page in under
300 ms at 100k memories", "pagination that survives 100k memories").

    uv run python -m bench.inspector [--size 100000] [--sample 20] [--runs 5] [--browser]
        [--store DIR] [--out bench-results/inspector-100k.json]

Seeds `--size` synthetic memories (`bench.synthetic`: dated over a year, in episodes, each
naming people, places, organisations) into one tenant through `POST /v1/memories:batch`,
500 a request, the pipeline settled after every `--segment` (graph extraction and judging
included), then times on the settled server, client side with HTTP:

- a memory page's data requests as the page makes them: `GET /v1/memories/{id}`, then its
  strength, graph neighbourhood, history (with the supersession chain, a memory at a time)
  and episode (`GET /v1/memories?episode=`) together; `--sample` memories spread over the
  listing, each `--runs` times;
- the memories page's requests (`GET /v1/stats` beside the first 25 of `GET
  /v1/memories` with the count of every match, `count=true`), and that page alone under
  filters (none, `state`, `importance`, a creation range, `flagged`): the count's cost at
  this size;
- the whole listing walked through `next_offset`, 500 a page: every id once, none missed
  (the count is `GET /v1/stats`'s); then pages of 25 at 10, 50, 90 and 100 % of the way
  (and 50 % with `state=active`), each `--runs` times;
- with `--browser` (and Chromium, `scripts/chromium.sh`): the memory page in headless
  Chromium until every part is drawn, opened by its address (scripts from the browser's
  cache) and through a link inside the inspector.

`--store DIR` keeps the vector store in DIR and the Redis DB unflushed, with a fixed
tenant: a second run with the same DIR measures again, seeding only what is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench import synthetic
from bench.common import (
    add_common_args,
    base_env,
    check,
    cli_main,
    client,
    envelope,
    environ_restored,
    log,
    median,
    pct,
    raw_client,
    run_id,
)
from bench.latency import ingest_segment
from pcm_client import AsyncPcmClient

KEY = "inspector-bench-key"
PAGE = 25  # the memories page's page size (static/views/memories.js)
WALK = 500  # the listing's largest page: the walk to the end
DEPTHS = (0.1, 0.5, 0.9, 1.0)
CHROMIUM = os.environ.get("PCM_CHROMIUM", "/usr/bin/chromium")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.inspector", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=500, help="memories per batch request")
    ap.add_argument("--segment", type=int, default=10_000, help="memories between settles")
    ap.add_argument("--sample", type=int, default=20, help="memory pages timed")
    ap.add_argument("--runs", type=int, default=5, help="times each request set is timed")
    ap.add_argument("--browser", action="store_true", help="also time pages in Chromium")
    ap.add_argument("--store", type=Path, help="keep the store here (reused when it exists)")
    add_common_args(ap, "inspector-100k.json")
    return ap


@asynccontextmanager
async def server(env: Mapping[str, str], store: Path | None) -> AsyncIterator[tuple[str, str]]:
    """A real all-in-one server in a child process, and the tenant it serves the key for:
    a fresh store and Redis DB, or with `store` the kept ones."""
    from pcm_cli.testing import server_process

    tenant = "inspector-kept" if store else f"inspector-{run_id()}"
    where = store or Path(tempfile.mkdtemp(prefix="pcm-bench-"))
    full = {
        **env,
        "PCM_QDRANT_PATH": str(where / "qdrant"),
        "PCM_API_KEYS": json.dumps({KEY: tenant}),
    }
    try:
        with environ_restored():
            async with server_process(full, flush_redis=store is None) as url:
                yield url, tenant
    finally:
        if store is None:
            shutil.rmtree(where, ignore_errors=True)


async def seed(c: AsyncPcmClient, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Store the memories the tenant still lacks (all but a kept store's), settled; the
    seeding's segments. A kept store notes what was sent, in `seeded.json` beside it: near
    duplicates are folded, so the tenant's count is not where the generator stopped."""
    mark = args.store / "seeded.json" if args.store else None
    done: dict[str, Any] = json.loads(mark.read_text()) if mark and mark.exists() else {}
    sent, segments = int(done.get("sent", 0)), list(done.get("segments", []))
    gen = itertools.islice(synthetic.memories(args.size, seed=1), sent, None)
    while sent < args.size:
        n = min(args.segment, args.size - sent)
        seg = await ingest_segment(c, gen, n, args.batch)
        sent += n
        segments.append({"after": sent, **{k: seg[k] for k in ("settled_per_s", "statuses")}})
        if mark:
            mark.write_text(json.dumps({"sent": sent, "segments": segments}))
        log(f"  seeded {sent}: {seg['settled_per_s']:.1f} memories/s settled")
    return segments


async def timed(c: httpx.AsyncClient, path: str, **params: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    body = check(await c.get(path, params=params or None))
    return (time.perf_counter() - t0) * 1000, body


async def history_part(c: httpx.AsyncClient, mem: Mapping[str, Any]) -> tuple[float, Any]:
    """The versions, then the supersession chain one memory at a time, up to five each
    way (`historyPart` and `chain` of the page)."""
    t0 = time.perf_counter()
    await timed(c, f"/v1/memories/{mem['id']}/history")
    for link in ("supersedes", "superseded_by"):
        nxt, steps = mem.get(link), 0
        while nxt and steps < 5:
            nxt, steps = (await timed(c, f"/v1/memories/{nxt}"))[1].get(link), steps + 1
    return (time.perf_counter() - t0) * 1000, None


async def memory_page(c: httpx.AsyncClient, mid: str) -> dict[str, float]:
    """The memory page's requests, in the page's order (`static/views/memory.js`): the
    memory, then its parts at once. Milliseconds of each and of the whole."""
    t0 = time.perf_counter()
    first, mem = await timed(c, f"/v1/memories/{mid}")
    parts: dict[str, Awaitable[tuple[float, Any]]] = {
        "strength": timed(c, f"/v1/memories/{mid}/strength"),
        "graph": timed(c, f"/v1/memories/{mid}/graph"),
        "history": history_part(c, mem),
    }
    if mem.get("episode"):
        parts["episode"] = timed(c, "/v1/memories", episode=mem["episode"], limit=100)
    done = await asyncio.gather(*parts.values())
    out = {"total": (time.perf_counter() - t0) * 1000, "memory": first}
    return out | {name: ms for name, (ms, _) in zip(parts, done, strict=True)}


async def memories_page(c: httpx.AsyncClient) -> dict[str, float]:
    """The memories page's requests (`static/views/memories.js`): the counts by state
    beside the first page with the count of every match."""
    t0 = time.perf_counter()
    (stats, _), (first, _) = await asyncio.gather(
        timed(c, "/v1/stats"), timed(c, "/v1/memories", limit=PAGE, count="true")
    )
    return {"total": (time.perf_counter() - t0) * 1000, "stats": stats, "list": first}


def counted_filters() -> dict[str, dict[str, str]]:
    """Filters of the memories page whose count the store works out (`count=true`); the
    synthetic memories are dated over the year before the run."""
    now = datetime.now(UTC)
    return {
        "none": {},
        "state=active": {"state": "active"},
        "importance=high": {"importance": "high"},
        "created in the last 90 days": {
            "created_after": (now - timedelta(days=90)).isoformat(),
            "created_before": now.isoformat(),
        },
        "flagged": {"flagged": "true"},
    }


async def counted_pages(c: httpx.AsyncClient, runs: int) -> dict[str, Any]:
    """The first page of 25 with the count of every match, and without it, per filter:
    ms of each and the count."""
    out: dict[str, Any] = {}
    for name, params in counted_filters().items():
        with_count = [
            await timed(c, "/v1/memories", limit=PAGE, count="true", **params) for _ in range(runs)
        ]
        plain = [(await timed(c, "/v1/memories", limit=PAGE, **params))[0] for _ in range(runs)]
        out[name] = {
            "count": with_count[0][1]["total"],
            "counted_ms": summary([{"ms": ms} for ms, _ in with_count])["ms"],
            "plain_ms": summary([{"ms": ms} for ms in plain])["ms"],
        }
    return out


def summary(samples: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Median, p95 and max of each timed part, in ms."""
    names = sorted({k for s in samples for k in s})
    return {
        n: {
            "p50": round(median(s[n] for s in samples if n in s), 1),
            "p95": round(pct([s[n] for s in samples if n in s], 95), 1),
            "max": round(max(s[n] for s in samples if n in s), 1),
        }
        for n in names
    }


async def walk(c: httpx.AsyncClient) -> dict[str, Any]:
    """The whole listing through `next_offset`: ids in listing order, and whether every
    memory came once (against the exact counts of `GET /v1/stats`)."""
    stats = check(await c.get("/v1/stats"))
    ids: list[str] = []
    times: list[float] = []
    offset: str | None = None
    while True:
        ms, page = await timed(
            c, "/v1/memories", limit=WALK, **({"offset": offset} if offset else {})
        )
        times.append(ms)
        ids += [m["id"] for m in page["items"]]
        offset = page["next_offset"]
        if not offset:
            break
    expected = int(stats["memories"]) + int(stats["episode_records"])
    return {
        "ids": ids,
        "pages": len(times),
        "listed": len(ids),
        "distinct": len(set(ids)),
        "expected": expected,
        "complete": len(ids) == len(set(ids)) == expected,
        "page_ms": {"p50": round(median(times), 1), "max": round(max(times), 1)},
        "seconds": round(sum(times) / 1000, 1),
    }


async def deep_pages(c: httpx.AsyncClient, ids: Sequence[str], runs: int) -> dict[str, Any]:
    """A page of 25 from a cursor at each depth of the listing (a cursor is the id the
    page starts at, as `next_offset` gives it), and the first page, `runs` times each."""
    at = {"first": None} | {
        f"{round(d * 100)}%": ids[min(len(ids) - 1, int(d * len(ids)))] for d in DEPTHS
    }
    out: dict[str, Any] = {}
    for name, cursor in at.items():
        params: dict[str, Any] = {"limit": PAGE} | ({"offset": cursor} if cursor else {})
        out[name] = summary(
            [{"ms": (await timed(c, "/v1/memories", **params))[0]} for _ in range(runs)]
        )["ms"]
    middle = ids[len(ids) // 2]
    active = [
        {"ms": (await timed(c, "/v1/memories", limit=PAGE, offset=middle, state="active"))[0]}
        for _ in range(runs)
    ]
    out["50% state=active"] = summary(active)["ms"]
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    env = base_env(args)
    out: dict[str, Any] = {}
    # Seeding goes through pcm-client; the pages' requests are timed raw, as the inspector's
    # browser code sends them (some, such as /strength and /graph, are the inspector's own).
    async with (
        server(env, args.store) as (url, _tenant),
        client(url, KEY) as api,
        raw_client(url, KEY) as c,
    ):
        out["seeding"] = await seed(api, args)
        listing = await walk(c)
        ids = listing.pop("ids")
        log(f"  listing walked: {listing['listed']} ids, every one once: {listing['complete']}")
        out["walk"] = listing
        step = max(1, len(ids) // args.sample)
        sample = ids[step // 2 :: step][: args.sample]
        for mid in sample[:3]:  # warm-up: connections, caches, lazy loading
            await memory_page(c, mid)
        pages = [await memory_page(c, mid) for _ in range(args.runs) for mid in sample]
        out["memory_page"] = summary(pages)
        log(f"  memory page: {out['memory_page']['total']}")
        out["memories_page"] = summary([await memories_page(c) for _ in range(args.runs)])
        out["counted_pages"] = await counted_pages(c, args.runs)
        log(f"  counted pages: {out['counted_pages']}")
        out["deep_pages"] = await deep_pages(c, ids, args.runs)
        log(f"  deep pages: {out['deep_pages']}")
        if args.browser:
            from bench.inspector_browser import browser_pages

            out["browser"] = await browser_pages(
                url, KEY, sample[: max(1, args.sample // 2)], args.runs
            )
            log(f"  browser: {out['browser']}")
        out["stats"] = await api.stats()
    config = {
        k: getattr(args, k) for k in ("size", "batch", "segment", "sample", "runs", "browser")
    }
    config["env"] = env
    return envelope("inspector", command, config, out)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.inspector", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
