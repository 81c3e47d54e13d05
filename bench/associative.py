"""Associative against focused recall on LoCoMo (issue 36 item 2): what the associations
add to the evidence recall at each k, per category (multi-hop especially), the prompt
tokens they cost, and the latency of each mode.

    uv run python -m bench.associative [--k 10 50] [--limit-conversations N]
        [--data PATH] [--env KEY=VAL] [--out bench-results/associative.json]

One server; for each k, each mode gets fresh tenants (a recall reinforces what it returns:
see `bench.locomo`) and asks every scored question with `now` just after the last session,
as `bench.locomo` does (the same ingest, jobs and settling). Focused recall is
`bench.locomo`'s request exactly. An associative answer's situational and episode slots
are the focused ones: its `recall` is those, and `recall_assoc` adds the turns of its
`associations`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    LOCOMO_PATH,
    add_common_args,
    base_env,
    cli_main,
    envelope,
    log,
    mean,
    median,
    pcm_server,
    run_id,
)
from bench.locomo import Record, run_pcm_k, summarize
from bench.locomo_data import load

MODES = ("focused", "associative")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.associative", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--k", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    ap.add_argument("--jobs", nargs="*", default=["consolidation"])
    add_common_args(ap, "associative.json")
    return ap


def gains(records: Sequence[Record], names: dict[int, str]) -> dict[str, Any]:
    """Per category and overall, for associative answers: recall without and with the
    associations, the gain, how many questions gained, and associations per answer."""
    groups: dict[str, list[Record]] = {"overall": list(records)}
    for r in records:
        groups.setdefault(names.get(r["category"], str(r["category"])), []).append(r)
    out: dict[str, Any] = {}
    for name, rs in groups.items():
        base = mean(r["recall"] for r in rs)
        plus = mean(r["recall_assoc"] for r in rs)
        out[name] = {
            "n": len(rs),
            "recall": round(base, 4),
            "recall_with_associations": round(plus, 4),
            "gain": round(plus - base, 4),
            "questions_gained": sum(1 for r in rs if r["recall_assoc"] > r["recall"]),
            "hit_rate_with_associations": round(
                mean(float(r["recall_assoc"] == 1.0) for r in rs), 4
            ),
            "associations_mean": round(mean(r["n_assoc"] for r in rs), 2),
        }
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, names = load(args.data, args.limit_conversations, 0.0)
    ks = sorted(set(args.k))
    rid = run_id()
    keys = {
        f"{c.sample_id}-k{k}-{m}": f"assoc-{c.sample_id}-k{k}-{m}-{rid}"
        for c in convs
        for k in ks
        for m in MODES
    }
    results: dict[str, Any] = {}
    env = base_env(args)
    async with pcm_server(env, keys, inline=args.inline_server) as url:
        for k in ks:
            per_mode: dict[str, Any] = {}
            for mode in MODES:
                k_keys = {c.sample_id: f"{c.sample_id}-k{k}-{mode}" for c in convs}
                recs, _ = await run_pcm_k(
                    url, k_keys, convs, k, True, args.quiet, args.jobs, mode=mode
                )
                lat = [r["latency_ms"] for r in recs]
                assoc_ms = [r["timings_ms"].get("associations", 0.0) for r in recs]
                per_mode[mode] = {
                    "summary": summarize(recs, names),
                    "latency_ms_p50": round(median(lat), 2),
                    "server_associations_ms_p50": round(median(assoc_ms), 2),
                    "tokens_mean": round(mean(r["tokens"] for r in recs), 1),
                }
                if mode != "focused":
                    per_mode[mode]["gains"] = gains(recs, names)
                o = per_mode[mode]["summary"]["overall"]
                line = f"  k={k} {mode}: recall {o['evidence_recall']:.3f} tokens "
                line += f"{o['tokens_mean']:.0f} p50 {per_mode[mode]['latency_ms_p50']:.1f} ms"
                if mode != "focused":
                    plus = per_mode[mode]["gains"]["overall"]["recall_with_associations"]
                    line += f", with associations {plus:.3f}"
                log(line)
            results[str(k)] = per_mode
    config = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in convs],
        "questions": sum(len(c.questions) for c in convs),
        "k": ks,
        "modes": list(MODES),
        "jobs_before_questions": args.jobs,
        "env": env,
    }
    return envelope("associative", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.associative", parser, run, argv, command)


if __name__ == "__main__":
    main()
