"""Precise recall against the standard recall on the LoCoMo dev conversations, as an agent
pays for it: evidence recall, the share of delivered lines that are evidence, prompt
tokens, duplicate lines, empty answers where nothing is relevant, latency.

    uv run python -m bench.precise [--k 10] [--limit-conversations N]
        [--env KEY=VAL] [--out bench-results/precise.json]

Sent as a client would: the conversations are users (`user_id`) of one tenant, one write per
turn (`POST /v1/memories`, in order), no `episode` ids. Two such tenants on one server, one
per precision, so one mode's reinforcement never moves the other's ranking. Each question
(categories 1-4) is asked in both, one after the other (alternating which goes first), with
`now` an hour after its conversation's last session, so the latencies are side by side.
Then every conversation's questions are asked with the next conversation's `user_id`: no
stored memory holds their answer, and the right answer is the empty one.

The precise cut's parameters are tuned leave-one-conversation-out on the standard answers'
rankings (`bench.precise_tune`): chosen on three conversations, scored on the fourth.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from datetime import datetime
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
    mean,
    median,
    pcm_server,
    progress,
    run_id,
    run_jobs,
    settle,
)
from bench.locomo import ASK_AFTER, retrieved_dias
from bench.locomo_data import Conversation, Question, evidence_recall, load
from bench.precise_tune import Cosines, exact_cosines, leave_one_out, seed_sweep
from pcm_client import AsyncPcmClient
from pcm_client.models import Precision
from pcm_common.text.tokens import count_tokens
from pcm_recall.precise import text_key
from pcm_recall.settings import RecallSettings

Record = dict[str, Any]
MODES: tuple[Precision, ...] = ("standard", "precise")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.precise", description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    ap.add_argument("--details", action="store_true", help="keep per-question records")
    add_common_args(ap, "precise.json")
    return ap


# ---- writing ------------------------------------------------------------------------------


async def ingest(c: AsyncPcmClient, conv: Conversation) -> dict[str, set[str]]:
    """One write per turn, in order, as the conversation's user, without an episode id;
    returns memory_id -> dia_ids (a merge maps several turns to one id)."""
    by_id: dict[str, set[str]] = {}
    for t in conv.turns:
        res = await c.store(
            t.text,
            user_id=conv.sample_id,
            created_at=t.created_at,
            metadata={"dia_id": t.dia_id},
        )
        if res.id is not None:  # None: a write the scope declined (none here)
            by_id.setdefault(res.id, set()).add(t.dia_id)
    return by_id


# ---- scoring one answer -------------------------------------------------------------------


def delivered(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The memories an answer delivers as lines (situational, then episode context)."""
    return [*body["situational_context"], *body.get("episode_context", [])]


def item_dias(item: dict[str, Any], by_id: dict[str, set[str]]) -> set[str]:
    return retrieved_dias({"situational_context": [item]}, by_id)


def duplicates(body: dict[str, Any]) -> int:
    """Lines whose text another line of the same answer (a pin included) already shows."""
    keys = [text_key(i["text"]) for i in [*body.get("asker_context", []), *delivered(body)]]
    return len(keys) - len(set(keys))


def score_answer(
    body: dict[str, Any],
    q: Question,
    asked_as: str,
    by_id: dict[str, set[str]],
    cos: Cosines,
    latency_ms: float,
) -> Record:
    items = delivered(body)
    evidence = set(q.evidence)
    hits = [bool(item_dias(i, by_id) & evidence) for i in items]
    rec = evidence_recall(q.evidence, retrieved_dias(body, by_id))
    return {
        "qid": q.qid,
        "conversation": q.sample_id,
        "asked_as": asked_as,
        "category": q.category,
        "evidence": list(q.evidence),
        "recall": rec,
        "lines": len(items),
        "evidence_lines": sum(hits),
        "tokens": count_tokens(body["prompt"]),
        "duplicates": duplicates(body),
        "flags": len(body.get("anomaly_flags", [])),
        "empty": bool(body.get("empty")),
        "latency_ms": round(latency_ms, 3),
        # The ranking the precise cut is replayed on (bench.precise_tune): score,
        # whether the memory is evidence, its exact cosine, its turns; best first.
        "ranking": [
            [
                round(i["score"], 6),
                bool(item_dias(i, by_id) & evidence),
                round(cos.of(q.qid, asked_as, item_dias(i, by_id)), 4),
                sorted(item_dias(i, by_id)),
            ]
            for i in body["situational_context"]
        ],
    }


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    lines = sum(r["lines"] for r in records)
    with_lines = [r for r in records if r["lines"]]
    return {
        "n": len(records),
        "evidence_recall": round(mean(r["recall"] for r in records), 4),
        # Per question (answers with at least one line), and over all delivered lines.
        "precision": round(mean(r["evidence_lines"] / r["lines"] for r in with_lines), 4),
        "precision_pooled": round(sum(r["evidence_lines"] for r in records) / lines, 4)
        if lines
        else None,
        "lines_mean": round(mean(r["lines"] for r in records), 2),
        "tokens_median": median(r["tokens"] for r in records),
        "tokens_mean": round(mean(r["tokens"] for r in records), 1),
        "duplicate_lines": sum(r["duplicates"] for r in records),
        "flags_mean": round(mean(r["flags"] for r in records), 3),
        "empty_share": round(mean(float(r["empty"]) for r in records), 4),
        "latency_ms_p50": round(median(r["latency_ms"] for r in records), 2),
    }


# ---- asking -------------------------------------------------------------------------------


async def ask(
    c: AsyncPcmClient, q: Question, user: str, now: datetime, k: int, mode: Precision
) -> tuple[dict[str, Any], float]:
    t = time.perf_counter()
    out = await c.recall(q.question, k=k, now=now, user_id=user, precision=mode)
    return as_json(out), (time.perf_counter() - t) * 1000


async def ask_all(
    clients: dict[Precision, AsyncPcmClient],
    convs: Sequence[Conversation],
    maps: dict[Precision, dict[str, dict[str, set[str]]]],
    k: int,
    cos: Cosines,
    quiet: bool,
    other_user: bool,
) -> dict[str, list[Record]]:
    """Every question in both modes, alternating which goes first; `other_user`: each
    conversation's questions asked as the next conversation's user."""
    out: dict[str, list[Record]] = {m: [] for m in MODES}
    for i, conv in enumerate(convs):
        owner = convs[(i + 1) % len(convs)] if other_user else conv
        now = owner.last_at + ASK_AFTER
        desc = f"{conv.sample_id}{' as ' + owner.sample_id if other_user else ''}"
        for n, q in enumerate(progress(conv.questions, quiet, desc=desc, leave=False)):
            order = MODES if n % 2 == 0 else MODES[::-1]
            for mode in order:
                body, ms = await ask(clients[mode], q, owner.sample_id, now, k, mode)
                by_id = maps[mode][owner.sample_id]
                out[mode].append(score_answer(body, q, owner.sample_id, by_id, cos, ms))
            for mode in MODES:  # reinforcement applied in question order: reruns agree
                await settle(clients[mode])
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, _ = load(args.data, args.limit_conversations)
    log(f"precise: {len(convs)} conversations as users of one tenant per mode, k={args.k}")
    cosines = await exact_cosines(convs)
    rid = run_id()
    keys = {f"precise-{m}-{rid}": f"precise-{m}-{rid}" for m in MODES}
    async with pcm_server(base_env(args), keys, inline=args.inline_server) as url:
        clients = {m: client(url, f"precise-{m}-{rid}") for m in MODES}
        try:
            t0 = time.perf_counter()
            jobs = [ingest(clients[m], conv) for m in MODES for conv in convs]
            done = await asyncio.gather(*jobs)
            maps = {
                m: {conv.sample_id: done[i * len(convs) + j] for j, conv in enumerate(convs)}
                for i, m in enumerate(MODES)
            }
            for m in MODES:
                await settle(clients[m])
            log(
                f"ingested {2 * sum(len(c.turns) for c in convs)} turns in "
                f"{time.perf_counter() - t0:.0f} s"
            )
            at = max(c.last_at for c in convs) + ASK_AFTER
            for m in MODES:  # as the scheduler would have by the question time
                await run_jobs(clients[m], ["consolidation"], at)
                await settle(clients[m])
            asks = (clients, convs, maps, args.k, cosines, args.quiet)
            own = await ask_all(*asks, other_user=False)
            other = await ask_all(*asks, other_user=True)
        finally:
            for c in clients.values():
                await c.aclose()
    results: dict[str, Any] = {
        "modes": {m: {"own": summarize(own[m]), "other_user": summarize(other[m])} for m in MODES},
        "leave_one_out": leave_one_out(own["standard"], other["standard"], cosines),
        "seed_sweep": seed_sweep(own["standard"], RecallSettings().precise_rule()),
    }
    for m in MODES:
        o, x = results["modes"][m]["own"], results["modes"][m]["other_user"]
        log(
            f"  {m}: recall {o['evidence_recall']:.3f} precision {o['precision']:.3f} "
            f"tokens p50 {o['tokens_median']:.0f} dups {o['duplicate_lines']} "
            f"other-user empty {x['empty_share']:.3f} p50 {o['latency_ms_p50']:.1f} ms"
        )
    config = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in convs],
        "turns": sum(len(c.turns) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "k": args.k,
        "env": base_env(args),
    }
    out = envelope("precise", command, config, results)
    if args.details:
        out["questions"] = {"own": own, "other_user": other}
    return out


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.precise", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
