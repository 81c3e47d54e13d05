"""Reconsolidation on pairs of statements about one subject (bench/reconsolidation_pairs).

    uv run python -m bench.reconsolidation [--parts dev heldout] [--variant NAME:KEY=VAL,...]
        [--out bench-results/reconsolidation.json]

Each pair gets a user of its own on one real server (`pcm dev`, default settings): the
earlier memory is stored, a recall delivers it (so it is labile), then the newer statement
is stored and the pipeline settled. Then:

- an update pair is right when the earlier memory now has version 2, its text (before its
  `(before: ...)`) holds every `current_has` and its `(before: ...)` part every
  `before_has`;
- a non-update pair is right when the earlier memory is still version 1;
- every rewritten memory's history must hold its earlier text word for word.

The parts are reported apart. Each held-out part was written before the changes its
predecessor's first run led to, and its own first run is the blind figure
(docs/benchmarks.md): `heldout` before the rules, `heldout2` after `heldout`'s run,
`heldout3` after `heldout2`'s, `heldout4` after `heldout3`'s, `heldout5` after `heldout4`'s
(docs/decisions/0053-reconsolidation.md). All of these have since been read and tuned on;
`blind6` was written by someone who had not read the code, and was first run once the
structural rules were final (docs/decisions/0057-reconsolidation-structure.md). `dev2`
is a second development set (docs/decisions/0064-reconsolidation-generality.md).
Targets (issue 36): >= 90% of updates right, <= 5% of non-updates rewritten, no history lost.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    add_common_args,
    as_json,
    base_env,
    cli_main,
    client,
    envelope,
    log,
    pcm_server,
    progress,
    run_id,
    settle,
    variants_of,
)
from pcm_client import AsyncPcmClient
from pcm_common.domain.reconsolidation import BEFORE, judge

PAIRS = Path(__file__).parent / "reconsolidation_pairs"
PARTS = (
    "dev",
    "dev2",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "blind6",
    "blind7",
)
KEY = "bench-reconsolidation"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.reconsolidation", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    add_common_args(ap, "reconsolidation.json")
    return ap


def load(part: str) -> list[dict[str, Any]]:
    lines = (PAIRS / f"{part}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def split(text: str) -> tuple[str, str]:
    """(what holds now, what held before) of a rewritten text."""
    at = text.find(BEFORE)
    return (text, "") if at < 0 else (text[:at], text[at + len(BEFORE) :])


def verdict(
    pair: dict[str, Any], got: dict[str, Any], history: list[dict[str, Any]]
) -> dict[str, Any]:
    """One pair's outcome."""
    rewritten = int(got["version"]) > 1
    now, before = split(str(got["text"]))
    right = not rewritten
    if pair["update"]:
        right = (
            rewritten
            and all(w.lower() in now.lower() for w in pair["current_has"])
            and all(w.lower() in before.lower() for w in pair["before_has"])
        )
    kept = not rewritten or any(h.get("text") == pair["old"] for h in history[:-1])
    return {
        "id": pair["id"],
        "update": pair["update"],
        "rewritten": rewritten,
        "right": right,
        "history_kept": kept,
        # What the rules say of the pair alone: a miss they would have caught is the
        # pipeline's (search, lability), not the rules'.
        "rule": judge(pair["old"], pair["new"]).reason,
        "text": got["text"],
    }


async def run_pairs(
    c: AsyncPcmClient, pairs: Sequence[dict[str, Any]], quiet: bool
) -> list[dict[str, Any]]:
    tag = run_id()
    users = [f"{tag}-{p['id']}" for p in pairs]
    olds = await c.store_batch(
        [{"text": p["old"], "user_id": u} for p, u in zip(pairs, users, strict=True)]
    )
    ids = [str(r.id) for r in olds.results]
    await settle(c)
    delivered: list[bool] = []
    for p, u, mid in progress(list(zip(pairs, users, ids, strict=True)), quiet, desc="recall"):
        r = await c.recall(p["old"], user_id=u, k=5)
        delivered.append(mid in [i.memory_id for i in r.situational_context])
    await settle(c)
    await c.store_batch(
        [{"text": p["new"], "user_id": u} for p, u in zip(pairs, users, strict=True)]
    )
    await settle(c)
    out = []
    for p, mid, seen in zip(pairs, ids, delivered, strict=True):
        got = as_json(await c.get(mid))
        history = [as_json(v) for v in (await c.history(mid)).versions]
        out.append({**verdict(p, got, history), "delivered": seen})
    return out


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ups = [r for r in rows if r["update"]]
    nons = [r for r in rows if not r["update"]]
    right = sum(r["right"] for r in ups)
    wrongly = sum(r["rewritten"] for r in nons)
    return {
        "updates": len(ups),
        "updates_right": right,
        "updates_right_share": round(right / len(ups), 4) if ups else None,
        "non_updates": len(nons),
        "non_updates_rewritten": wrongly,
        "non_updates_rewritten_share": round(wrongly / len(nons), 4) if nons else None,
        "rewrites_losing_history": sum(not r["history_kept"] for r in rows),
        "not_delivered": sum(not r["delivered"] for r in rows),
        "missed": [r["id"] for r in ups if not r["right"]],
        "rewritten_non_updates": [r["id"] for r in nons if r["rewritten"]],
    }


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for variant in variants_of(args):
        env = {**base_env(args), **variant.env}
        async with pcm_server(env, {KEY: "bench"}, inline=args.inline_server) as url:
            async with client(url, KEY) as c:
                parts: dict[str, Any] = {}
                for part in args.parts:
                    rows = await run_pairs(c, load(part), args.quiet)
                    parts[part] = {"summary": summary(rows), "pairs": rows}
                    log(f"{variant.name} {part}: {json.dumps(parts[part]['summary'])}")
        results[variant.name] = parts
    config = {"parts": args.parts, "variants": [v.name for v in variants_of(args)]}
    return envelope("reconsolidation", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.reconsolidation", parser, run, argv, command)


if __name__ == "__main__":
    main()
