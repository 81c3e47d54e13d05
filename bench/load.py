"""Mixed load on the all-in-one server (`make bench-load`, issue 39): tenants x clients
writing one memory, writing batches and recalling, back to back, for a bounded time; then
how long the pipeline takes to drain.

    uv run python -m bench.load [--duration 180 | --soak] [--tenants 3] [--clients 4]
        [--mix write=0.4,batch=0.1,recall=0.5] [--batch 20] [--seed-memories 300]
        [--variant NAME:KEY=VAL,...] [--out bench-results/load.json]

The server is `pcm dev` in a child process on loopback, on a fresh Qdrant Edge store and a
flushed Redis DB, with the graph server at --graph-uri (ArcadeDB's Bolt server, the
embedded default). Each tenant is first given --seed-memories (in batches, settled) so
recalls find something, and a few recalls are timed one at a time on the idle server.
Then every client (its own connection, pcm-client without retries) draws its next
operation from --mix and sends it as soon as the previous one answered (closed loop, no
think time): a client waits for the server, so throughput is what the server sustains at
this concurrency.

Reported per operation and in total: requests/s, p50/p95/p99/max client-side ms, errors by
HTTP status (or the client's error where nothing answered); the same per --window; the
server tree's resident memory and CPU over time (sampled from /proc), its growth over the
load and CPU ms per request; the pipeline's backlog over time and the seconds it took to
drain after the last answer. JSON to --out and a chart (SVG) next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import synthetic
from bench.common import (
    add_common_args,
    base_env,
    cli_main,
    client,
    cpu_shares,
    cpu_ticks,
    envelope,
    log,
    median,
    parse_kv,
    pcm_server,
    pct,
    run_id,
    settle,
    variants_of,
)
from bench.load_stats import (
    OK,
    OpRecord,
    Sample,
    cpu_per_request_ms,
    cpu_split,
    group_drain,
    rss_growth,
    summarise,
    windows,
)
from bench.procs import child_running, usage
from bench.svg_chart import Panel, Series, render
from pcm_client import AsyncPcmClient, PcmError
from pcm_common.messaging.backlog import group_backlogs

OPS = ("write", "batch", "recall")
SOAK_S = 1800.0
MB = 1024 * 1024


def parse_mix(text: str) -> dict[str, float]:
    """``write=0.4,batch=0.1,recall=0.5``: each operation's share of requests (normalised;
    an operation left out is never drawn)."""
    mix = dict(parse_kv(p) for p in text.split(",") if p.strip())
    unknown = set(mix) - set(OPS)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown operations {sorted(unknown)}; known: {OPS}")
    try:
        weights = {op: float(v) for op, v in mix.items()}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"shares must be numbers: {text!r}") from exc
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise argparse.ArgumentTypeError(f"shares must be >= 0 and not all 0: {text!r}")
    total = sum(weights.values())
    return {op: w / total for op, w in weights.items() if w > 0}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=180.0, help="seconds of load")
    ap.add_argument(
        "--soak", action="store_true", help=f"a soak: {SOAK_S / 60:.0f} minutes of load"
    )
    ap.add_argument("--tenants", type=int, default=3)
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients per tenant")
    ap.add_argument("--mix", type=parse_mix, default=parse_mix("write=0.4,batch=0.1,recall=0.5"))
    ap.add_argument("--batch", type=int, default=20, help="memories per batch request")
    ap.add_argument("--k", type=int, default=10, help="memories per recall")
    ap.add_argument("--seed-memories", type=int, default=300, help="per tenant, before load")
    ap.add_argument("--idle-recalls", type=int, default=20, help="timed alone, before load")
    ap.add_argument("--sample-s", type=float, default=1.0, help="seconds between readings")
    ap.add_argument("--window", type=float, default=10.0, help="seconds per progress window")
    ap.add_argument(
        "--request-timeout", type=float, default=60.0, help="a request slower is an error"
    )
    ap.add_argument("--drain-timeout", type=float, default=900.0)
    ap.add_argument("--seed", type=int, default=7, help="of the operation draws")
    add_common_args(ap, "load.json")
    return ap


@dataclass
class Clock:
    """The load's time origin and whether clients should stop."""

    t0: float
    until: float

    def now(self) -> float:
        return time.perf_counter() - self.t0


def body_of(m: synthetic.SyntheticMemory) -> dict[str, Any]:
    return {"text": m.text, "created_at": m.created_at.isoformat(), "episode": m.episode}


def outcome_of(exc: BaseException) -> str:
    """An error's name in the report: the HTTP status where PCM answered, else the client
    error's class (TransportError, Timeout) or "timeout" past --request-timeout."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, PcmError) and exc.status is not None:
        return str(exc.status)
    return type(exc).__name__


async def one_client(
    c: AsyncPcmClient,
    clock: Clock,
    mix: Mapping[str, float],
    rnd: random.Random,
    seed: int,
    args: argparse.Namespace,
    records: list[OpRecord],
    statuses: dict[str, int],
) -> None:
    """Requests back to back until the clock runs out; each one recorded."""
    mems = iter(synthetic.memories(10**7, seed=seed))
    questions = synthetic.questions(2000, seed=seed + 1)
    ops, weights = list(mix), list(mix.values())
    while clock.now() < clock.until:
        op = rnd.choices(ops, weights)[0]
        start = clock.now()
        outcome = OK
        try:
            async with asyncio.timeout(args.request_timeout):
                if op == "write":
                    m = next(mems)
                    res = await c.store(m.text, created_at=m.created_at, episode=m.episode)
                    statuses[res.status] = statuses.get(res.status, 0) + 1
                elif op == "batch":
                    batch = [body_of(next(mems)) for _ in range(args.batch)]
                    out = await c.store_batch(batch)
                    for r in out.results:
                        statuses[r.status] = statuses.get(r.status, 0) + 1
                else:
                    await c.recall(rnd.choice(questions), k=args.k)
        except (PcmError, TimeoutError) as exc:
            outcome = outcome_of(exc)
        records.append(OpRecord(op, start, (clock.now() - start) * 1000, outcome))


async def read_once(
    c: AsyncPcmClient,
    pid: int,
    clock: Clock,
    samples: list[Sample],
    groups: list[dict[str, Any]],
) -> None:
    """One reading: the server tree's memory and CPU, and the pipeline's backlog (one
    `/v1/pipeline` call, ~1.5 ms of server CPU), overall and per consumer group."""
    u = usage(pid)
    try:
        status = await c.pipeline()
        backlog = int(status.get("pending") or 0)
        groups.append({"t_s": round(clock.now(), 2), **group_backlogs(status)})
    except PcmError:
        backlog = -1  # the server did not answer in time: shown as a gap, not a zero
    samples.append(
        Sample(
            round(clock.now(), 2),
            round(u.root_rss_bytes / MB, 1),
            round(u.tree_rss_bytes / MB, 1),
            round(u.tree_cpu_s, 2),
            backlog,
        )
    )


async def sampler(
    c: AsyncPcmClient,
    pid: int,
    clock: Clock,
    every_s: float,
    samples: list[Sample],
    groups: list[dict[str, Any]],
    stop: asyncio.Event,
) -> None:
    """A `read_once` every `every_s` until `stop`."""
    while not stop.is_set():
        await read_once(c, pid, clock, samples, groups)
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


async def progress_lines(
    clock: Clock, records: list[OpRecord], samples: list[Sample], every_s: float, quiet: bool
) -> None:
    """One log line per window while the load runs."""
    if quiet:
        return
    seen = 0
    while clock.now() < clock.until:
        await asyncio.sleep(min(every_s, max(0.05, clock.until - clock.now())))
        fresh = records[seen:]
        seen = len(records)
        parts = []
        for op in OPS:
            ms = [r.ms for r in fresh if r.op == op]
            if ms:
                parts.append(f"{op} {len(ms)} p50 {median(ms):.0f} p95 {pct(ms, 95):.0f} ms")
        errors = sum(1 for r in fresh if r.outcome != OK)
        last = samples[-1] if samples else None
        tail = f", RSS {last.tree_rss_mb:.0f} MB, backlog {last.backlog}" if last else ""
        log(
            f"  t={clock.now():5.0f}s {len(fresh) / every_s:5.1f} req/s; "
            + "; ".join(parts)
            + f"; errors {errors}{tail}"
        )


async def seed_tenant(url: str, key: str, n: int, batch: int, seed: int) -> None:
    async with client(url, key) as c:
        mems = list(synthetic.memories(n, seed=seed))
        for i in range(0, len(mems), max(1, batch)):
            await c.store_batch([body_of(m) for m in mems[i : i + batch]])
        await settle(c)


async def idle_recalls(c: AsyncPcmClient, n: int, k: int) -> list[float]:
    out = []
    for q in synthetic.questions(n + 3, seed=5):
        t = time.perf_counter()
        await c.recall(q, k=k)
        out.append((time.perf_counter() - t) * 1000)
    return out[3:]  # the first pay lazy loading


async def drain(
    c: AsyncPcmClient, clock: Clock, timeout_s: float, every_s: float, quiet: bool
) -> tuple[float | None, int]:
    """Seconds from now until the pipeline has nothing pending and no index build runs;
    with the backlog found at the start. A progress line every `every_s`."""
    start = clock.now()
    first: int | None = None
    said = start
    while True:
        status = await c.pipeline()
        pending = int(status.get("pending") or 0)
        if first is None:
            first = pending
            log(f"  load stopped at {start:.1f} s with {first} entries pending; draining")
        if pending == 0 and not status.get("indexing"):
            return round(clock.now() - start, 2), first
        if clock.now() - start > timeout_s:
            return None, first
        if not quiet and clock.now() - said >= every_s:
            said = clock.now()
            busy = {g: n for g, n in group_backlogs(status).items() if n}
            log(f"  draining, {said - start:4.0f} s: {pending} pending {busy}")
        await asyncio.sleep(0.25)


def chart(samples: Sequence[Sample], stopped_s: float, drained_s: float | None) -> str:
    marks = [(stopped_s, "load stops")]
    if drained_s is not None:
        marks.append((stopped_s + drained_s, "drained"))
    return render(
        [
            Panel(
                "Server resident memory",
                "MB",
                [
                    Series("server + children", [(s.t_s, s.tree_rss_mb) for s in samples]),
                    Series("server process", [(s.t_s, s.rss_mb) for s in samples]),
                ],
                marks,
            ),
            Panel(
                "Pipeline backlog (entries still to process)",
                "",
                [Series("backlog", [(s.t_s, s.backlog) for s in samples if s.backlog >= 0])],
                marks,
            ),
        ],
        "seconds since the load started",
    )


def save_chart(path: Path, svg: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg)
    log(f"wrote {path}")


async def run_variant(
    args: argparse.Namespace, env: dict[str, str], variant_env: dict[str, str], svg: Path
) -> dict[str, Any]:
    rid = run_id()
    keys = {f"t{i}": f"load-{i}-{rid}" for i in range(args.tenants)}
    duration = SOAK_S if args.soak else args.duration
    async with pcm_server({**env, **variant_env}, keys, inline=args.inline_server) as url:
        pid = os.getpid() if args.inline_server else child_running(os.getpid(), "pcm_cli.main")
        if pid is None:
            raise RuntimeError("could not find the server's process")
        log(f"  seeding {args.tenants} x {args.seed_memories} memories")
        await asyncio.gather(
            *(
                seed_tenant(url, k, args.seed_memories, 100, seed=500 + i)
                for i, k in enumerate(keys)
            )
        )
        async with client(url, "t0") as probe:
            alone = await idle_recalls(probe, args.idle_recalls, args.k)
            log(f"  idle recall p50 {median(alone):.1f} ms, p95 {pct(alone, 95):.1f} ms")
            records: list[OpRecord] = []
            samples: list[Sample] = []
            groups: list[dict[str, Any]] = []
            statuses: dict[str, int] = {}
            clients = [client(url, k) for k in keys for _ in range(args.clients)]
            stop = asyncio.Event()
            clock = Clock(time.perf_counter(), duration)
            ticks0 = cpu_ticks()
            sampling = asyncio.create_task(
                sampler(probe, pid, clock, args.sample_s, samples, groups, stop)
            )
            log(
                f"  load: {args.tenants} tenants x {args.clients} clients for {duration:.0f} s, "
                f"mix {args.mix}"
            )
            try:
                await asyncio.gather(
                    progress_lines(clock, records, samples, args.window, args.quiet),
                    *(
                        one_client(
                            c,
                            clock,
                            args.mix,
                            random.Random(args.seed * 1000 + i),
                            seed=10_000 + i,
                            args=args,
                            records=records,
                            statuses=statuses,
                        )
                        for i, c in enumerate(clients)
                    ),
                )
            finally:
                for c in clients:
                    await c.aclose()
            stopped = clock.now()
            shares = cpu_shares(ticks0, cpu_ticks())
            drained, backlog_at_stop = await drain(
                probe, clock, args.drain_timeout, args.window, args.quiet
            )
            log(f"  drained in {drained:.1f} s" if drained is not None else "  did not drain")
            stop.set()
            await sampling
            # The drained state itself, so every group's clearing time is read.
            await read_once(probe, pid, clock, samples, groups)
    ops = summarise(records, stopped)
    save_chart(svg, chart(samples, stopped, drained))
    return {
        "duration_s": round(stopped, 2),
        "idle_recall_ms": {
            "p50": round(median(alone), 1),
            "p95": round(pct(alone, 95), 1),
            "n": len(alone),
        },
        "ops": ops,
        "write_statuses": dict(sorted(statuses.items())),
        "memories_written": sum(statuses.values()),
        "cpu_ms_per_request": cpu_per_request_ms(samples, stopped, len(records)),
        # The drain's work too: all the server's CPU the load caused, per request.
        "server_cpu_s": cpu_split(samples, stopped),
        "machine_cpu_during_load": shares,
        "rss": rss_growth(samples, stopped),
        "drain_s": drained,
        "backlog_at_stop": backlog_at_stop,
        "groups_after_stop": group_drain(groups, stopped),
        "windows": windows(records, args.window, duration),
        "samples": [asdict(s) for s in samples],
        "group_backlogs": groups,
        "chart": str(svg),
    }


def result_line(name: str, res: Mapping[str, Any]) -> str:
    a = res["ops"]["all"]
    per_op = "; ".join(
        f"{op} {o['per_s']}/s p50 {o['p50_ms']} p95 {o['p95_ms']} p99 {o['p99_ms']} ms"
        for op, o in res["ops"].items()
        if op != "all"
    )
    rss = res["rss"]
    drains = {
        g: d["cleared_after_s"]
        for g, d in res.get("groups_after_stop", {}).items()
        if d["cleared_after_s"]
    }
    last = max(drains, key=lambda g: drains[g]) if drains else None
    return (
        f"{name}: {a['per_s']} req/s, errors {a['errors'] or 0}; {per_op}; "
        f"RSS {rss.get('first_mb')} -> {rss.get('last_mb')} MB ({rss.get('growth_pct')}%); "
        f"drain {res['drain_s']} s" + (f" (last to clear: {last})" if last else "")
    )


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    env = base_env(args)
    results: dict[str, Any] = {}
    for variant in variants_of(args):
        log(f"load, variant {variant.name}: {variant.env or '(service defaults)'}")
        svg = args.out.with_name(f"{args.out.stem}-{variant.name}.svg")
        res = await run_variant(args, env, variant.env, svg)
        results[variant.name] = {"env": variant.env, **res}
        log(result_line(variant.name, res))
    config = {
        k: getattr(args, k)
        for k in (
            "duration",
            "soak",
            "tenants",
            "clients",
            "mix",
            "batch",
            "k",
            "seed_memories",
            "idle_recalls",
            "request_timeout",
            "inline_server",
        )
    }
    config["env"] = env
    return envelope("load", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.load", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
