"""Recall latency of server variants side by side on copies of one prepared store.

    uv run python -m bench.recall_ab --variant a:PCM_X=1 --variant b:PCM_X=0 [--size 10000]
        [--rounds 2] [--queries 100] [--k 10 50] [--out bench-results/recall-ab.json]

`bench.latency` ingests a fresh store per variant, so two variants differ in their store
(its segments, what the index build had reached) and in the machine's drift over the ten
minutes between them. Here the store is ingested once, through a server with the service
defaults, and each round starts every variant in turn on a fresh copy of its shard (same
Redis, same graph), so only the variant's settings differ. A round: 10 warm-up recalls,
then `--queries` timed back-to-back recalls per k, the side effects settled before and
after, then `--spaced` recalls each on a settled server (as `bench.latency --spaced`).
Reported: each variant's client-side p50 per round, and their median.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import synthetic
from bench.common import (
    add_common_args,
    base_env,
    cli_main,
    client,
    envelope,
    log,
    median,
    run_id,
    variants_of,
)
from bench.latency import ingest_segment, recall_rounds

SEGMENT = 2_000  # memories ingested (and settled) between two progress lines


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.recall_ab", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--k", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--queries", type=int, default=100, help="timed recalls per round and k")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--spaced", type=int, default=0, help="more recalls per k, each on a settled server"
    )
    ap.add_argument("--batch", type=int, default=500, help="memories per ingest request")
    add_common_args(ap, "recall-ab.json")
    return ap


async def _build(env: dict[str, str], shard: Path, key: str, size: int, batch: int) -> None:
    from pcm_cli.testing import server_process

    async with server_process({**env, "PCM_QDRANT_PATH": str(shard)}) as url:
        async with client(url, key) as c:
            memories = iter(synthetic.memories(size, seed=1))
            for stored in range(0, size, SEGMENT):
                n = min(SEGMENT, size - stored)
                seg = await ingest_segment(c, memories, n, batch)
                log(f"  stored {stored + n}/{size} ({seg['settled_per_s']:.1f} memories/s settled)")


async def _timed(
    env: dict[str, str],
    shard: Path,
    key: str,
    ks: Sequence[int],
    queries: int,
    seed: int,
    spaced: int = 0,
) -> dict[int, dict[str, float]]:
    """One round per k on a server over `shard`, as `bench.latency` times its rounds."""
    from pcm_cli.testing import server_process

    out: dict[int, dict[str, float]] = {}
    # Redis keeps the store's routines and streams: not flushed between variants.
    async with server_process({**env, "PCM_QDRANT_PATH": str(shard)}, flush_redis=False) as url:
        async with client(url, key) as c:
            for k in ks:
                res = await recall_rounds(c, k, 1, queries, True, spaced, seed=seed + k)
                out[k] = {"p50": res["client_ms_p50"], "p95": res["client_ms_p95"]}
                if "spaced_ms_p50" in res:
                    out[k]["spaced_p50"] = res["spaced_ms_p50"]
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    env = base_env(args)
    variants = variants_of(args)
    key = f"recall-ab-{run_id()}"
    env["PCM_API_KEYS"] = f'{{"{key}": "{key}"}}'
    tmp = Path(tempfile.mkdtemp(prefix="pcm-recall-ab-"))
    rounds: dict[str, list[dict[int, dict[str, float]]]] = {v.name: [] for v in variants}
    try:
        log(f"recall A/B: ingesting {args.size} memories once")
        await _build(env, tmp / "store", key, args.size, args.batch)
        for r in range(args.rounds):
            for v in variants:
                copy = tmp / f"copy-{r}-{v.name}"
                shutil.copytree(tmp / "store", copy)
                got = await _timed(
                    {**env, **v.env}, copy, key, args.k, args.queries, 100 + 7 * r, args.spaced
                )
                shutil.rmtree(copy, ignore_errors=True)
                rounds[v.name].append(got)
                log(
                    f"  round {r + 1}, {v.name}: "
                    + ", ".join(
                        f"k={k} p50 {got[k]['p50']:.1f} ms"
                        + (
                            f" (spaced {got[k]['spaced_p50']:.1f})"
                            if "spaced_p50" in got[k]
                            else ""
                        )
                        for k in args.k
                    )
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results: dict[str, Any] = {}
    for v in variants:
        per_k = {
            str(k): {
                "p50_per_round": [x[k]["p50"] for x in rounds[v.name]],
                "p95_per_round": [x[k]["p95"] for x in rounds[v.name]],
                "p50_median": round(median(x[k]["p50"] for x in rounds[v.name]), 2),
                **(
                    {
                        "spaced_p50_per_round": [x[k]["spaced_p50"] for x in rounds[v.name]],
                        "spaced_p50_median": round(
                            median(x[k]["spaced_p50"] for x in rounds[v.name]), 2
                        ),
                    }
                    if args.spaced
                    else {}
                ),
            }
            for k in args.k
        }
        results[v.name] = {"env": v.env, **per_k}
        log(
            f"{v.name}: "
            + ", ".join(
                f"k={k} p50 {per_k[str(k)]['p50_median']:.1f} ms"
                + (f" (spaced {per_k[str(k)]['spaced_p50_median']:.1f})" if args.spaced else "")
                for k in args.k
            )
        )
    config = {
        "spaced": args.spaced,
        "size": args.size,
        "k": args.k,
        "queries": args.queries,
        "rounds": args.rounds,
        "env": env,
    }
    return envelope("recall_ab", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.recall_ab", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
