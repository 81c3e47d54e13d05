"""Recall latency at 10k (and optionally 100k) memories in one tenant, and ingest throughput
through the HTTP API including every downstream consumer catching up.

    uv run python -m bench.latency [--sizes 10000 100000] [--k 10 50] [--rounds 3]
        [--variant NAME:KEY=VAL,...] [--out bench-results/latency.json]

Ingest: memories/s from the first request until ``GET /v1/pipeline`` reports nothing
pending (graph extraction and judging included), one memory per request ("single") and
``--batch`` per request ("batched"); the batched figure is the median over segments of
``--segment`` memories, the single one the median over ``--single-repeats`` runs. Each
segment also reports the CPU time per memory of this process and its children (server
and client run in this process, the server's spaCy parses in a child), which other load on
the machine changes little.
Recall: client-side p50/p95 per round of ``--queries`` questions asked back to back (medians
over rounds), then of ``--spaced`` questions each asked once the server has applied the
previous one's side effects, and the share of server time per stage from ``timings_ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
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
    pcm_server,
    pct,
    progress,
    run_id,
    settle,
    stage_medians,
    stage_shares,
    store_seconds,
    store_seconds_between,
    variants_of,
)
from pcm_client import AsyncPcmClient


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--k", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--queries", type=int, default=100, help="questions per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--spaced",
        type=int,
        default=50,
        help="recalls per k timed one at a time on a settled server (0: none)",
    )
    ap.add_argument("--batch", type=int, default=500, help="memories per batch request")
    ap.add_argument("--segment", type=int, default=2_000, help="memories per timed segment")
    ap.add_argument("--single-n", type=int, default=100, help="memories per single-ingest run")
    ap.add_argument("--single-repeats", type=int, default=3)
    add_common_args(ap, "latency.json")
    return ap


def body_of(m: synthetic.SyntheticMemory) -> dict[str, Any]:
    return {"text": m.text, "created_at": m.created_at.isoformat(), "episode": m.episode}


async def ingest_single(c: AsyncPcmClient, n: int, seed: int) -> dict[str, float]:
    mems = list(synthetic.memories(n, seed=seed))
    t0 = time.perf_counter()
    for m in mems:
        await c.store(m.text, created_at=m.created_at, episode=m.episode)
    acked = time.perf_counter() - t0
    await settle(c)
    done = time.perf_counter() - t0
    return {"n": n, "acked_per_s": n / acked, "settled_per_s": n / done}


def process_tree_cpu_s() -> float:
    """CPU seconds of this process and of all its live descendants (the server process and
    its parse process; `time.process_time` counts this process only), read from /proc
    (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])  # ppid; utime and stime follow at fields 11 and 12
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    me = os.getpid()
    total = time.process_time()
    for pid in cpu:
        p = parent.get(pid)
        while p and p != me:
            p = parent.get(p)
        if p == me:
            total += cpu[pid]
    return total


async def ingest_segment(
    c: AsyncPcmClient, gen: Iterator[synthetic.SyntheticMemory], n: int, batch: int
) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    t0 = time.perf_counter()
    cpu0 = process_tree_cpu_s()
    ticks0 = cpu_ticks()
    store0 = await store_seconds(c)
    left = n
    while left > 0:
        chunk = list(itertools.islice(gen, min(batch, left)))
        left -= len(chunk)
        res = await c.store_batch([body_of(m) for m in chunk])
        for r in res.results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
    acked = time.perf_counter() - t0
    # Which consumer the wait after the last acknowledgement was for, and how much of the
    # machine was used: idle cores while one stage catches up cost the rate as much as CPU.
    cleared: dict[str, float | None] = {}
    await settle(c, cleared=cleared)
    done = time.perf_counter() - t0
    shares = cpu_shares(ticks0, cpu_ticks())
    # CPU of this process tree: the benchmark's client, the server (a child, or this process
    # with --inline-server) and its spaCy parse process. Unlike the rates it does not depend
    # on what else the machine runs (benchmarks share the cores); the graph server and Redis
    # are not counted.
    cpu_ms = (process_tree_cpu_s() - cpu0) * 1000 / n
    # Where the server's store time went, by consumer group and call (the embedded engine
    # holds the interpreter lock while it works).
    store = store_seconds_between(store0, await store_seconds(c))
    return {
        "n": n,
        "acked_per_s": n / acked,
        "settled_per_s": n / done,
        "cpu_ms_per_memory": round(cpu_ms, 2),
        "cores_busy": shares["busy"] if shares else None,
        "cpu_steal": shares["steal"] if shares else None,
        "cleared_after_ack_s": {g: t for g, t in sorted(cleared.items()) if t is not None},
        "statuses": statuses,
        "store_engine_s": store,
    }


def segment_line(seg: Mapping[str, Any]) -> str:
    """One ingest segment's figures, for the progress log."""
    line = (
        f"{seg['settled_per_s']:.1f} memories/s settled "
        f"({seg['acked_per_s']:.1f}/s acknowledged, "
        f"{seg['cpu_ms_per_memory']:.1f} ms CPU per memory"
    )
    if seg.get("cores_busy") is not None:
        line += f", cores busy {seg['cores_busy']:.0%}"
    if seg.get("cpu_steal"):
        line += f", stolen {seg['cpu_steal']:.0%}"
    tails = seg.get("cleared_after_ack_s") or {}
    if tails:
        # The last three consumer groups to finish (a stage's followers finish with it).
        last = sorted(tails, key=lambda g: tails[g], reverse=True)[:3]
        done = ", ".join(f"{g} {tails[g]:.1f}" for g in last)
        line += f"; done after the last acknowledgement: {done} s"
    store = seg.get("store_engine_s") or {}
    if store:
        top = ", ".join(f"{k} {v:.1f}" for k, v in list(store.items())[:3])
        line += f"; vector engine {sum(store.values()):.1f} s: {top}"
    return line + ")"


async def spaced_recalls(
    c: AsyncPcmClient, questions: Sequence[str], k: int, quiet: bool
) -> list[float]:
    """Client-side ms of each recall asked on a server that has applied the previous one's
    side effects, as an agent asking once per prompt finds it (back to back, every recall
    shares the process with the side effects of those before it)."""
    out: list[float] = []
    for q in progress(questions, quiet, desc=f"recall k={k} spaced", leave=False):
        await asyncio.sleep(0.05)  # the recall event is published after the response
        await settle(c)
        t = time.perf_counter()
        await c.recall(q, k=k)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def recall_rounds(
    c: AsyncPcmClient,
    k: int,
    rounds: int,
    queries: int,
    quiet: bool,
    spaced: int = 0,
    seed: int | None = None,
) -> dict[str, Any]:
    """10 warm-up recalls, `rounds` rounds of `queries` back-to-back recalls (settled
    after each), then `spaced` recalls; questions from `seed` (default 100 + k)."""
    qs = synthetic.questions(queries * rounds + 10 + spaced, seed=100 + k if seed is None else seed)
    for q in qs[:10]:  # warm-up: first calls pay lazy loading
        await c.recall(q, k=k)
    await settle(c)
    per_round: list[dict[str, float]] = []
    timings: list[dict[str, float]] = []
    for r in range(rounds):
        lat: list[float] = []
        for q in progress(
            qs[10 + r * queries : 10 + (r + 1) * queries],
            quiet,
            desc=f"recall k={k} round {r + 1}",
            leave=False,
        ):
            t = time.perf_counter()
            body = await c.recall(q, k=k)
            lat.append((time.perf_counter() - t) * 1000)
            timings.append(body.timings_ms)
        per_round.append({"p50": median(lat), "p95": pct(lat, 95)})
        # Reinforcement of this round runs in the background; let it finish so it does not
        # land on the next round's clock.
        await settle(c)
    alone = await spaced_recalls(c, qs[len(qs) - spaced :] if spaced else [], k, quiet)
    spaced_stats = (
        {"spaced_ms_p50": round(median(alone), 2), "spaced_ms_p95": round(pct(alone, 95), 2)}
        if alone
        else {}
    )
    return {
        "client_ms_p50": round(median(x["p50"] for x in per_round), 2),
        "client_ms_p95": round(median(x["p95"] for x in per_round), 2),
        **spaced_stats,
        "rounds": [{k2: round(v, 2) for k2, v in x.items()} for x in per_round],
        "server_ms_median": stage_medians(timings),
        "server_share": stage_shares(timings),
    }


async def run_variant(
    args: argparse.Namespace, env: dict[str, str], variant_env: dict[str, str]
) -> dict[str, Any]:
    rid = run_id()
    keys = {"lat": f"latency-{rid}", "single": f"latency-single-{rid}"}
    out: dict[str, Any] = {"ingest_single": {}, "ingest_batched": {}, "recall": {}}
    async with pcm_server({**env, **variant_env}, keys, inline=args.inline_server) as url:
        async with client(url, "single") as c:
            runs = []
            for r in range(args.single_repeats):
                runs.append(await ingest_single(c, args.single_n, seed=1000 + r))
                log(
                    f"  single ingest run {r + 1}: "
                    f"{runs[-1]['settled_per_s']:.1f} memories/s settled"
                )
            out["ingest_single"] = {
                "runs": runs,
                "acked_per_s_median": round(median(x["acked_per_s"] for x in runs), 1),
                "settled_per_s_median": round(median(x["settled_per_s"] for x in runs), 1),
            }
        async with client(url, "lat") as c:
            gen = iter(synthetic.memories(max(args.sizes), seed=1))
            stored = 0
            segments: list[dict[str, Any]] = []
            for size in sorted(args.sizes):
                while stored < size:
                    n = min(args.segment, size - stored)
                    seg = await ingest_segment(c, gen, n, args.batch)
                    stored += n
                    segments.append({**seg, "after": stored})
                    log(f"  batched ingest to {stored}: {segment_line(seg)}")
                out["recall"][str(size)] = {}
                for k in args.k:
                    res = await recall_rounds(
                        c, k, args.rounds, args.queries, args.quiet, args.spaced
                    )
                    out["recall"][str(size)][str(k)] = res
                    alone = (
                        f", spaced p50 {res['spaced_ms_p50']:.1f} ms"
                        if "spaced_ms_p50" in res
                        else ""
                    )
                    log(
                        f"  {size} memories, k={k}: p50 {res['client_ms_p50']:.1f} ms, "
                        f"p95 {res['client_ms_p95']:.1f} ms{alone}, shares {res['server_share']}"
                    )
            out["ingest_batched"] = {
                "batch": args.batch,
                "segments": segments,
                "acked_per_s_median": round(median(x["acked_per_s"] for x in segments), 1),
                "settled_per_s_median": round(median(x["settled_per_s"] for x in segments), 1),
                "cpu_ms_per_memory_median": round(
                    median(x["cpu_ms_per_memory"] for x in segments), 2
                ),
            }
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    env = base_env(args)
    results: dict[str, Any] = {}
    for variant in variants_of(args):
        log(f"latency, variant {variant.name}: {variant.env or '(service defaults)'}")
        results[variant.name] = {"env": variant.env, **await run_variant(args, env, variant.env)}
    config = {
        k: getattr(args, k)
        for k in (
            "sizes",
            "k",
            "queries",
            "rounds",
            "spaced",
            "batch",
            "segment",
            "single_n",
            "single_repeats",
        )
    }
    config["env"] = env
    return envelope("latency", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.latency", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
