"""What every benchmark shares: configuration variants, a fresh real server per variant,
API clients (pcm-client), waiting for the pipeline, statistics and the JSON result envelope."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx
import numpy as np
from pydantic import BaseModel

from pcm_client import NO_RETRY, AsyncPcmClient

_T = TypeVar("_T")

# Tests own Redis DBs 13-15 and flush them; benchmarks keep to 5-12 so neither wipes the other.
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/6"
BENCH_REDIS_DBS = range(5, 13)
DEFAULT_GRAPH_URI = "bolt://127.0.0.1:7688"  # ArcadeDB, the embedded default (make run)
RESULTS_DIR = Path("bench-results")
LOCOMO_PATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo_dev.json"


@dataclass(frozen=True)
class Variant:
    """One server configuration: a name and the PCM_* environment it runs with."""

    name: str
    env: dict[str, str] = field(default_factory=dict)


def parse_kv(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def parse_variant(spec: str) -> Variant:
    """``name`` or ``name:KEY=VAL,KEY=VAL`` (values may not contain commas)."""
    name, _, rest = spec.partition(":")
    if not name.strip():
        raise argparse.ArgumentTypeError(f"variant needs a name: {spec!r}")
    env = dict(parse_kv(p) for p in rest.split(",") if p.strip())
    return Variant(name.strip(), env)


def add_common_args(ap: argparse.ArgumentParser, out: str) -> None:
    ap.add_argument(
        "--env",
        action="append",
        type=parse_kv,
        default=[],
        metavar="KEY=VALUE",
        help="environment for every variant's server (repeatable)",
    )
    ap.add_argument(
        "--variant",
        action="append",
        type=parse_variant,
        default=[],
        metavar="NAME[:KEY=VAL,...]",
        help="a configuration to run on a fresh store (repeatable); default: one 'default'",
    )
    ap.add_argument("--redis-url", default=os.environ.get("PCM_BENCH_REDIS", DEFAULT_REDIS_URL))
    ap.add_argument("--graph-uri", default=os.environ.get("PCM_BENCH_GRAPH", DEFAULT_GRAPH_URI))
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / out)
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    ap.add_argument(
        "--inline-server",
        action="store_true",
        help="run the server in this process's event loop instead of a child process",
    )


def variants_of(args: argparse.Namespace) -> list[Variant]:
    return list(args.variant) or [Variant("default")]


def check_redis_db(url: str) -> None:
    """Refuse Redis databases other people use: the server flushes its DB on start."""
    path = urlparse(url).path.strip("/") or "0"
    if not path.isdigit() or int(path) not in BENCH_REDIS_DBS:
        dbs = f"{BENCH_REDIS_DBS.start}-{BENCH_REDIS_DBS.stop - 1}"
        raise SystemExit(f"benchmarks use Redis DB {dbs} only (flushed on start); got {url}")


def base_env(args: argparse.Namespace) -> dict[str, str]:
    check_redis_db(args.redis_url)
    env = {
        "REDIS_URL": args.redis_url,
        "NEO4J_URI": args.graph_uri,
        "PCM_LOG_LEVEL": "WARNING",
        # The scheduler runs demotion at wall-clock time; benchmark memories are dated in the
        # past (LoCoMo: 2022-2023), so a tick would archive them mid-run. Jobs run only when
        # a benchmark asks (POST /v1/jobs/..., with a simulated `now`).
        "PCM_JOB_INTERVAL_S": "1000000000",
    }
    env.update(dict(args.env))
    return env


@asynccontextmanager
async def pcm_server(
    env: Mapping[str, str], keys: Mapping[str, str], *, inline: bool = False
) -> AsyncIterator[str]:
    """A real all-in-one server on a fresh Qdrant Edge shard and a flushed Redis DB: `pcm
    dev` in a child process, as `make run` starts it, or with `inline` inside this event
    loop (the benchmark's own HTTP client then shares the server's interpreter lock).

    ``running_server`` writes ``env`` into ``os.environ``; it is restored afterwards so the
    next variant starts from the same base and not with the previous variant's knobs.
    """
    from pcm_cli.testing import running_server, server_process

    tmp = Path(tempfile.mkdtemp(prefix="pcm-bench-"))
    full = {
        **env,
        "PCM_QDRANT_PATH": str(tmp / "qdrant"),
        "PCM_API_KEYS": json.dumps(dict(keys)),
    }
    try:
        with environ_restored():
            if inline:
                async with running_server(full) as url:
                    yield url
            else:
                async with server_process(full) as url:
                    yield url
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def environ_restored(env: Mapping[str, str] | None = None) -> Iterator[None]:
    """`env` set in this process for the block; the whole previous environment is restored
    after, whatever the block itself wrote into it."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def client(url: str, key: str) -> AsyncPcmClient:
    """The benchmarks' client of one API key: pcm-client's, without retries (a benchmark
    reports a failure, it does not hide it behind a retry and a slower figure)."""
    # Idle connections are dropped before uvicorn's 5 s keep-alive closes them: reusing one
    # the server had just closed failed a request with ReadError (a 30-minute lifecycle run
    # lost: one conversation's client sat idle while the others worked).
    return AsyncPcmClient(
        url,
        key,
        timeout=600.0,
        retry=NO_RETRY,
        transport=httpx.AsyncHTTPTransport(limits=httpx.Limits(keepalive_expiry=2.0)),
    )


def raw_client(url: str, key: str) -> httpx.AsyncClient:
    """A plain HTTP client of one API key, for what pcm-client does not speak: the
    inspector's page requests, timed as the browser sends them (`bench.inspector`)."""
    return httpx.AsyncClient(
        base_url=url,
        headers={"Authorization": f"Bearer {key}"},
        timeout=600.0,
        limits=httpx.Limits(keepalive_expiry=2.0),
    )


def as_json(out: BaseModel) -> dict[str, Any]:
    """An answer of pcm-client (a recall's, a memory) as the JSON the server sent (the
    fields it sent, no defaults added): what the benchmarks read, count and keep."""
    return out.model_dump(mode="json", exclude_unset=True)


def note_cleared(cleared: dict[str, float | None], backlogs: Mapping[str, int], t: float) -> None:
    """Track when each group's backlog was last seen to reach zero: a group with work is
    reset to None, one without work that had some gets `t` (groups never seen busy are
    left out)."""
    for group, left in backlogs.items():
        if left:
            cleared[group] = None
        elif group in cleared and cleared[group] is None:
            cleared[group] = t


async def settle(
    c: AsyncPcmClient,
    within_s: float = 1800.0,
    poll_s: float = 0.02,
    cleared: dict[str, float | None] | None = None,
) -> None:
    """Wait for ``pending == 0``; polls faster than ``pcm_cli.testing.settle`` because the
    benchmarks settle after every question and 100 ms a poll would dominate the run.
    `cleared`: filled with the seconds from the call to each busy consumer group's last
    entry (`note_cleared`), to show which stage the wait was for."""
    from pcm_common.messaging.bus import group_backlogs

    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + within_s
    while True:
        status = await c.pipeline()
        if cleared is not None:
            note_cleared(cleared, group_backlogs(status), round(loop.time() - start, 3))
        # An index build in the server's child process outlasts the pipeline; measuring
        # next to it would time the build, which an in-process build never let happen.
        if status["pending"] == 0 and not status.get("indexing"):
            return
        if loop.time() > deadline:
            raise TimeoutError(f"pipeline did not settle: {status}")
        # A poll costs the server in this process ~1.5 ms of CPU; every 20 ms through a
        # backlog of thousands of entries that was ~10% of an ingest benchmark's CPU. The
        # pipeline clears far fewer than 2,000 entries/s (three per memory), so sleeping
        # pending/2000 s wakes before the backlog is gone, and the last entries are still
        # polled every `poll_s`.
        await asyncio.sleep(
            0.25 if status["pending"] == 0 else min(1.0, max(poll_s, status["pending"] / 2000))
        )


def check(r: httpx.Response) -> Any:
    """The JSON of a raw answer (the inspector's pages, which pcm-client does not cover)."""
    if r.status_code >= 400:
        raise RuntimeError(f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text}")
    return r.json() if r.content else None


async def run_jobs(c: AsyncPcmClient, names: Sequence[str], now: datetime) -> dict[str, int]:
    """Run lifecycle jobs for the client's tenant at a simulated time; a job this server
    does not know is skipped (older builds lack consolidation), not an error."""
    known = set((await c.jobs())["jobs"])
    changed: dict[str, int] = {}
    for name in names:
        if name not in known:
            continue
        res = await c.run_job(name, now)
        changed[name] = int(res.changed or 0)
    return changed


def run_id() -> str:
    return uuid.uuid4().hex[:6]


# ---- statistics ---------------------------------------------------------------------------


def pct(xs: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs, dtype=float), q)) if xs else float("nan")


def median(xs: Iterable[float]) -> float:
    v = list(xs)
    return float(np.median(np.asarray(v, dtype=float))) if v else float("nan")


def mean(xs: Iterable[float]) -> float:
    v = list(xs)
    return float(np.mean(np.asarray(v, dtype=float))) if v else float("nan")


def stage_medians(timings: Sequence[Mapping[str, float]]) -> dict[str, float]:
    stages = sorted({s for t in timings for s in t})
    return {s: round(median(t[s] for t in timings if s in t), 3) for s in stages}


# The recall path's consecutive stages (`timings_ms` laps). Its other entries overlap them
# (graph lookup, flags) or are not times (graph_ok, graph_links), so they are not shares.
SEQUENTIAL_STAGES = (
    "embed",
    "search",
    "graph_join",
    "rerank",
    "score",
    "context_and_flags",
    "render",
)


def stage_shares(timings: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Share of summed server time per consecutive stage (sums, not medians, so shares add
    up to 1)."""
    totals: dict[str, float] = {}
    for t in timings:
        for s, v in t.items():
            if s in SEQUENTIAL_STAGES:
                totals[s] = totals.get(s, 0.0) + v
    whole = sum(totals.values()) or 1.0
    return {s: round(v / whole, 4) for s, v in sorted(totals.items())}


# ---- rendering like the service -----------------------------------------------------------


def dated_line(created_at: datetime, text: str) -> str:
    """The service's situational line format (pcm_recall.prompt)."""
    return f"- [{created_at:%Y-%m-%d %H:%M}] {' '.join(text.split())}"


# ---- results ------------------------------------------------------------------------------


def command_line(module: str, argv: Sequence[str] | None) -> str:
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join(["uv run python -m", module, *([shlex.join(args)] if args else [])])


@dataclass(frozen=True)
class CpuTicks:
    """The whole machine's CPU ticks since boot: `busy` (user, nice, system, interrupts),
    `steal` (wanted by this VM, given by the hypervisor to others: a sign of the drift
    between runs) and `total` (those with idle and I/O wait)."""

    busy: int
    steal: int
    total: int


async def store_seconds(c: AsyncPcmClient) -> dict[str, float]:
    """Seconds the server has spent in embedded vector engine calls, by "caller op"
    (`pcm_store_engine_seconds_total`: they hold its interpreter lock); empty when it
    counts none (a Qdrant server) or /metrics does not answer. /metrics is Prometheus
    text, outside the API pcm-client speaks, so it is read raw."""
    async with httpx.AsyncClient(base_url=c.url, headers=c.headers, timeout=60.0) as raw:
        r = await raw.get("/metrics")
    return store_seconds_in(r.text) if r.status_code == 200 else {}


def store_seconds_in(metrics: str) -> dict[str, float]:
    """`store_seconds` read from a Prometheus text exposition."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics):
        if family.name == "pcm_store_engine_seconds":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    out[f"{sample.labels['caller']} {sample.labels['op']}"] = sample.value
    return out


def store_seconds_between(
    before: Mapping[str, float], after: Mapping[str, float]
) -> dict[str, float]:
    """`store_seconds` spent between two readings, largest first (to the microsecond)."""
    spent = {k: round(v - before.get(k, 0.0), 6) for k, v in after.items()}
    return {k: v for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v > 0}


def cpu_ticks() -> CpuTicks | None:
    """The machine's `CpuTicks` now, from /proc/stat (Linux); None elsewhere."""
    try:
        with open("/proc/stat") as f:
            values = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    values += [0] * (8 - len(values))
    user, nice, system, _idle, _iowait, irq, softirq, steal = values
    return CpuTicks(user + nice + system + irq + softirq, steal, sum(values))


def cpu_shares(before: CpuTicks | None, after: CpuTicks | None) -> dict[str, float] | None:
    """The busy and stolen shares of the machine's CPU time between two `cpu_ticks`."""
    if before is None or after is None or after.total <= before.total:
        return None
    total = after.total - before.total
    return {
        "busy": round((after.busy - before.busy) / total, 3),
        "steal": round((after.steal - before.steal) / total, 3),
    }


def cpu_model() -> str:
    """The processor's name and clock as the kernel reports them (Linux), else the
    platform's word for it."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    fields = dict(
        (k.strip(), v.strip())
        for k, _, v in (line.partition(":") for line in info.splitlines())
        if k.strip() in ("model name", "cpu MHz")
    )
    mhz = fields.get("cpu MHz")
    name = fields.get("model name", "unknown")
    return f"{name} @ {float(mhz):.0f} MHz" if mhz else name


def embed_ms_per_text(n: int = 128) -> float:
    """Calibration: milliseconds of one-thread MiniLM work per short synthetic memory (the
    largest single cost of ingest and of a recall). The project's machines are all "2
    cores" but their processors differ: the same code measured 193 ingested memories / s
    on one and ~80 on another whose embedding was 2.6x slower; this figure lets results of
    different sessions be compared."""
    from bench import synthetic
    from pcm_common.models import local_minilm

    texts = sorted((m.text for m in synthetic.memories(n, seed=99)), key=len)
    local_minilm.embed(texts[:16])  # load and warm the session first
    t0 = time.process_time()
    local_minilm.embed(texts)
    return round((time.process_time() - t0) * 1000 / n, 2)


def machine_facts() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
        "embed_ms_per_text": embed_ms_per_text(),
    }


def envelope(name: str, command: str, config: dict[str, Any], results: Any) -> dict[str, Any]:
    return {
        "benchmark": name,
        "command": command,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_facts(),
        "config": config,
        "results": results,
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def progress(iterable: Iterable[_T], quiet: bool, **kw: Any) -> Iterable[_T]:
    if quiet:
        return iterable
    from tqdm import tqdm

    bar: Iterable[_T] = tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kw)  # untyped
    return bar


def log(msg: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


def stop_on_sigterm() -> None:
    """SIGTERM (`kill`, `timeout`) stops a benchmark as Ctrl-C does: the running task is
    cancelled, so its server child is stopped too. Python's default action ends the process
    at once and left the `pcm dev` child running, serving a flushed Redis DB that the next
    benchmark then shared."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def cli_main(
    module: str,
    parser: Callable[[], argparse.ArgumentParser],
    run: Callable[[argparse.Namespace, str], Coroutine[Any, Any, dict[str, Any]]],
    argv: Sequence[str] | None,
    command: str | None,
) -> dict[str, Any]:
    """Shared `main` of the benchmark modules: parse, run, write the JSON, return it."""
    args = parser().parse_args(argv)
    stop_on_sigterm()
    out: dict[str, Any] = asyncio.run(run(args, command or command_line(module, argv)))
    write_json(args.out, out)
    return out
