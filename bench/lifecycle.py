"""180-day lifecycle simulation on the LoCoMo dev conversations (whitepaper §5.5).

    uv run python -m bench.lifecycle [--days 180] [--ask-every 30] [--k 50]
        [--modes demotion deletion fresh] [--variant NAME:KEY=VAL,...]
        [--out bench-results/lifecycle.json]

Half of each conversation's questions (alternating within each category, so the split is
deterministic and balanced) are asked on a schedule through the real recall path, whose
side effects reinforce what it returns (in the sweeper). The clock starts at each
conversation's last session and advances one day at a time; every simulated day the
pipeline is settled and maintenance runs at the simulated time. The other half is asked
once at the end with default recall (active memories, and archived ones a strong cue
reactivates) and scored on evidence recall.

Modes, each on a fresh store:
- ``demotion``: PCM as built, ``POST /v1/jobs/demotion`` with the simulated ``now``
  (weak and unrecalled for 90 days -> archived, searchable on request only);
- ``deletion``: instead of demotion, memories whose strength at the simulated time is
  below 0.05 are deleted (``GET /v1/memories`` + ``DELETE``), the "prune the weak" policy;
- ``fresh``: no simulation; the store as ingested, evaluated at the same final time.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import (
    LOCOMO_PATH,
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
    run_jobs,
    settle,
    variants_of,
)
from bench.locomo import ingest, retrieved_dias, summarize
from bench.locomo_data import Conversation, Question, evidence_recall, load
from pcm_client import AsyncPcmClient, NotFound
from pcm_client.models import State
from pcm_common.domain.strength import DEMOTE_BELOW, decayed
from pcm_common.text.tokens import count_tokens

MODES = ("demotion", "deletion", "fresh")
# Each simulated day's work happens at noon; questions asked at the end come a minute after.
DAY_HOUR = timedelta(hours=12)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.lifecycle", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument(
        "--ask-every",
        type=int,
        default=30,
        help="days between repeats of a scheduled question (0: each asked once)",
    )
    ap.add_argument(
        "--ask-k",
        type=int,
        default=10,
        help="k of the scheduled recalls (an agent's compact per-turn recall)",
    )
    ap.add_argument("--eval-k", type=int, default=50, help="k of the final evaluation")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument(
        "--jobs",
        nargs="*",
        default=["consolidation"],
        help="lifecycle jobs run daily besides demotion/deletion (unknown ones skipped)",
    )
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--details", action="store_true", help="keep the held-out questions' records")
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    add_common_args(ap, "lifecycle.json")
    return ap


def split(conv: Conversation) -> tuple[list[Question], list[Question]]:
    """(asked on the schedule, held out): alternate within each category."""
    asked: list[Question] = []
    held: list[Question] = []
    counts: dict[int, int] = {}
    for q in sorted(conv.questions, key=lambda q: q.qid):
        i = counts.get(q.category, 0)
        counts[q.category] = i + 1
        (asked if i % 2 == 0 else held).append(q)
    return asked, held


def schedule(asked: Sequence[Question], days: int, every: int) -> dict[int, list[Question]]:
    """Day -> questions. Question j starts on a day spread over the first period, then repeats
    every ``every`` days (an agent returning to the same topics)."""
    period = every if every > 0 else days
    plan: dict[int, list[Question]] = {}
    for j, q in enumerate(asked):
        day = 1 + (j * period) // max(len(asked), 1)
        while day <= days:
            plan.setdefault(day, []).append(q)
            if every <= 0:
                break
            day += every
    return plan


async def list_all(c: AsyncPcmClient, state: State | None = None) -> list[dict[str, Any]]:
    return [m async for m in c.iter_memories(page_size=500, state=state)]


async def delete_weak(c: AsyncPcmClient, now: datetime) -> int:
    """Strength at the simulated time (the API's current_strength uses the wall clock)."""
    weak = []
    for m in await list_all(c, state="active"):
        st = m["strength"]
        s = decayed(st["s_ref"], datetime.fromisoformat(st["t_ref"]), st["n"], now, m["pinned"])
        if s < DEMOTE_BELOW:
            weak.append(m["id"])
    for mid in weak:
        with contextlib.suppress(NotFound):  # gone meanwhile
            await c.delete(mid)
    return len(weak)


async def ask(
    c: AsyncPcmClient,
    q: Question,
    k: int,
    now: datetime,
    by_id: dict[str, set[str]],
    include_archived: bool = False,
) -> dict[str, Any]:
    body = as_json(await c.recall(q.question, k=k, now=now, include_archived=include_archived))
    got = retrieved_dias(body, by_id)
    rec = evidence_recall(q.evidence, got)
    return {
        "qid": q.qid,
        "category": q.category,
        "recall": rec,
        "hit": rec == 1.0,
        "tokens": count_tokens(body["prompt"]),
        # Which evidence turns the answer lacked, and whether the graph answered in time
        # (on a loaded machine its lookups time out and recall loses the graph's links).
        "missed": sorted(set(q.evidence) - got),
        "graph_ok": bool(body.get("timings_ms", {}).get("graph_ok", 1.0)),
    }


async def run_mode(
    mode: str,
    args: argparse.Namespace,
    env: dict[str, str],
    convs: Sequence[Conversation],
    names: dict[int, str],
) -> dict[str, Any]:
    rid = run_id()
    keys = {c.sample_id: f"life-{mode}-{c.sample_id}-{rid}" for c in convs}
    t_start = time.perf_counter()
    async with pcm_server(env, keys, inline=args.inline_server) as url:
        clients = {c.sample_id: client(url, c.sample_id) for c in convs}
        try:
            maps: dict[str, dict[str, set[str]]] = {}
            for conv in convs:
                maps[conv.sample_id], _ = await ingest(clients[conv.sample_id], conv)
            any_client = next(iter(clients.values()))
            await settle(any_client)
            start = {
                c.sample_id: c.last_at.replace(hour=0, minute=0, second=0) + DAY_HOUR for c in convs
            }
            plans = {c.sample_id: schedule(split(c)[0], args.days, args.ask_every) for c in convs}
            removed = 0
            asked_records: list[dict[str, Any]] = []
            if mode != "fresh":
                for day in progress(range(1, args.days + 1), args.quiet, desc=f"{mode} days"):
                    for conv in convs:
                        c = clients[conv.sample_id]
                        now = start[conv.sample_id] + timedelta(days=day)
                        for q in plans[conv.sample_id].get(day, []):
                            r = await ask(c, q, args.ask_k, now, maps[conv.sample_id])
                            asked_records.append({**r, "day": day})
                    await settle(any_client)  # reinforcement lands before maintenance
                    for conv in convs:
                        c = clients[conv.sample_id]
                        now = start[conv.sample_id] + timedelta(days=day)
                        if mode == "demotion":
                            done = await run_jobs(c, ["demotion", *args.jobs], now)
                            removed += done.get("demotion", 0)
                        else:
                            await run_jobs(c, args.jobs, now)
                            removed += await delete_weak(c, now)
                    await settle(any_client)
            held: list[dict[str, Any]] = []
            held_archived: list[dict[str, Any]] = []
            asked_end: list[dict[str, Any]] = []
            for conv in convs:
                c = clients[conv.sample_id]
                end = start[conv.sample_id] + timedelta(days=args.days, minutes=1)
                asked_q, held_q = split(conv)
                if mode == "fresh":  # what the scheduler would have done by then, no more
                    await run_jobs(c, args.jobs, end)
                    await settle(c)
                for q in held_q:
                    held.append(await ask(c, q, args.eval_k, end, maps[conv.sample_id]))
                    if mode == "demotion":
                        held_archived.append(
                            await ask(c, q, args.eval_k, end, maps[conv.sample_id], True)
                        )
                # The held-out half is asked before the asked half so their reinforcement
                # cannot help it; the asked half at the end is for reference only.
                for q in asked_q:
                    asked_end.append(await ask(c, q, args.eval_k, end, maps[conv.sample_id]))
                await settle(c)
            # Turns still active; the episode records consolidation made are counted apart.
            at_end = [m for c in clients.values() for m in await list_all(c, state="active")]
            records = sum(1 for m in at_end if m.get("source") == "consolidation")
            active = len(at_end) - records
        finally:
            for c in clients.values():
                await c.aclose()
    out: dict[str, Any] = {
        "held_out": summarize(held, names),
        "asked_half_at_end": summarize(asked_end, names),
        "scheduled_recalls": len(asked_records),
        "removed": removed,
        "active_at_end": active,
        "episode_records_at_end": records,
        "memories": sum(len(m) for m in maps.values()),
        "seconds": round(time.perf_counter() - t_start, 1),
    }
    if held_archived:
        out["held_out_include_archived"] = summarize(held_archived, names)
    every = [*asked_records, *held, *held_archived, *asked_end]
    out["graph_timeouts"] = sum(not r["graph_ok"] for r in every)
    if args.details:
        out["held_out_questions"] = held
        out["held_out_include_archived_questions"] = held_archived
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, names = load(args.data, args.limit_conversations)
    env = base_env(args)
    results: dict[str, Any] = {}
    for variant in variants_of(args):
        results[variant.name] = {"env": variant.env, "modes": {}}
        for mode in args.modes:
            log(f"lifecycle {variant.name} / {mode}: {args.days} days")
            res = await run_mode(mode, args, {**env, **variant.env}, convs, names)
            results[variant.name]["modes"][mode] = res
            o = res["held_out"]["overall"]
            log(
                f"  held-out recall {o['evidence_recall']:.3f}, hit {o['hit_rate']:.3f}; "
                f"removed {res['removed']}, active {res['active_at_end']}/{res['memories']}, "
                f"graph timeouts {res['graph_timeouts']}, {res['seconds']} s"
            )
    asked = [len(split(c)[0]) for c in convs]
    config = {
        "conversations": [c.sample_id for c in convs],
        "days": args.days,
        "ask_every": args.ask_every,
        "ask_k": args.ask_k,
        "eval_k": args.eval_k,
        "asked_questions": sum(asked),
        "held_out_questions": sum(len(c.questions) for c in convs) - sum(asked),
        "modes": args.modes,
        "daily_jobs": args.jobs,
        "env": env,
    }
    return envelope("lifecycle", command, config, results)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.lifecycle", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
