"""Moving a store to another embedding model while recall keeps answering (issue 37,
point 5): `--n` synthetic memories stored in a `pcm dev` server (a child process, as `make
run` starts it) with `--from-model`, the pipeline settled, recall timed (`--queries`
questions back to back), then `POST /v1/admin/reembed` to `--to-model` with a loop
recalling the whole time the job runs, then recall timed again.

    uv run python -m bench.reembed [--n 10000] [--from-model pcm-local/minilm]
        [--to-model pcm-local/minilm-q8t] [--queries 100] [--out bench-results/reembed.json]

Reports: the job's time (its record's start to finish) and memories/s, the recalls made
during it and how many failed (a 5xx or no answer), recall p50/p95 before, during and
after, and how many of the questions' top-k ids stayed (a different model ranks near ties
differently, so this is not 1).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

from bench import synthetic
from bench.common import (
    add_common_args,
    base_env,
    cli_main,
    client,
    envelope,
    log,
    pcm_server,
    pct,
    settle,
)
from bench.latency import body_of
from pcm_client import ApiError, AsyncPcmClient, PcmError

KEY = "bench-reembed"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.reembed", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--from-model", default="pcm-local/minilm")
    ap.add_argument("--to-model", default="pcm-local/minilm-q8t")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batch", type=int, default=500)
    add_common_args(ap, "reembed.json")
    return ap


def ms(xs: Sequence[float]) -> dict[str, float | int]:
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "p50": round(pct(xs, 50), 1), "p95": round(pct(xs, 95), 1)}


async def timed_recalls(
    c: AsyncPcmClient, questions: Sequence[str], k: int
) -> tuple[list[float], list[set[str]]]:
    took, ids = [], []
    for q in questions:
        t0 = time.perf_counter()
        body = await c.recall(q, k=k)
        took.append((time.perf_counter() - t0) * 1000)
        ids.append({s.memory_id for s in body.situational_context})
    return took, ids


async def recall_while(
    c: AsyncPcmClient, questions: Sequence[str], k: int, running: asyncio.Event
) -> dict[str, Any]:
    """Recall back to back until `running` is cleared: latencies and failures."""
    took: list[float] = []
    failures: dict[str, int] = {}
    for q in itertools.cycle(questions):
        if not running.is_set():
            break
        t0 = time.perf_counter()
        key: str | None = None
        try:
            await c.recall(q, k=k)
        except ApiError as exc:
            key = str(exc.status)
        except PcmError as exc:  # no answer: named by httpx's error, as before pcm-client
            key = type(exc.__cause__ or exc).__name__
        if key is None:
            took.append((time.perf_counter() - t0) * 1000)
        else:
            failures[key] = failures.get(key, 0) + 1
    return {"recalls": len(took) + sum(failures.values()), "failures": failures, "ms": took}


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    # The bench key is the operator's too: re-embedding takes an operator key.
    env = {
        **base_env(args),
        "PCM_EMBEDDING_MODEL": args.from_model,
        "PCM_OPERATOR_KEYS": json.dumps({KEY: "bench"}),
    }
    questions = synthetic.questions(args.queries, seed=3)
    async with pcm_server(env, {KEY: "bench"}, inline=args.inline_server) as url:
        async with client(url, KEY) as c:
            log(f"storing {args.n} memories with {args.from_model}")
            gen = synthetic.memories(args.n, seed=1)
            t0 = time.perf_counter()
            while chunk := list(itertools.islice(gen, args.batch)):
                await c.store_batch([body_of(m) for m in chunk])
            await settle(c)
            log(f"stored and settled in {time.perf_counter() - t0:.0f} s")
            before_ms, before_ids = await timed_recalls(c, questions, args.k)

            running = asyncio.Event()
            running.set()
            loop = asyncio.create_task(recall_while(c, questions, args.k, running))
            started = await c.reembed(args.to_model)
            log(f"re-embedding {started.total} memories to {args.to_model}")
            while (job := await c.reembed_status()).status != "done":
                if job.error:
                    raise SystemExit(f"the job stopped: {job.error}")
                await asyncio.sleep(0.5)
            running.clear()
            during = await loop
            seconds = float(job.finished_at or 0.0) - float(job.started_at or 0.0)
            log(
                f"done in {seconds:.1f} s; {during['recalls']} recalls during it, "
                f"failures {during['failures']}"
            )
            after_ms, after_ids = await timed_recalls(c, questions, args.k)

    kept = [len(a & b) / len(b) for a, b in zip(after_ids, before_ids, strict=True) if b]
    results = {
        "memories": job.done,
        "seconds": round(seconds, 1),
        "memories_per_s": round(job.done / seconds, 1),
        "store_model": job.store_model,
        "recalls_during": during["recalls"],
        "recall_failures_during": during["failures"],
        "recall_ms": {
            "before": ms(before_ms),
            "during": ms(during["ms"]),
            "after": ms(after_ms),
        },
        "topk_kept_mean": round(sum(kept) / len(kept), 3) if kept else None,
    }
    log(f"results: {results}")
    config = {
        "n": args.n,
        "from_model": args.from_model,
        "to_model": args.to_model,
        "k": args.k,
        "queries": args.queries,
        "env": env,
    }
    return envelope("reembed", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.reembed", parser, run, argv, command)


if __name__ == "__main__":
    main()
