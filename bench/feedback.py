"""Retrieval feedback replayed on LoCoMo dev: what feedback after the questions does to the
same questions asked again, to questions it was never given on, and to a control store.

    uv run python -m bench.feedback [--k 10] [--limit-conversations N] [--out ...]

Per conversation, two fresh tenants hold the same turns (as `bench.locomo` stores them):

- *feedback*: every question is asked once (pass 1). The *judged* half of the questions
  (a fixed split by a hash of the question id) gets feedback on its recall: `helpful` for
  each delivered memory holding an evidence turn, `not_helpful` for each delivered memory
  holding none (`--missed` adds `missed` for evidence not delivered). Then every question
  is asked again (pass 2). The *held-out* half never gets feedback: it must not get worse.
  The judged questions are also asked reworded ("Can you remind me, ...") in both passes:
  near the judged cue but not the same text.
- *control*: the same questions asked twice, no feedback. Recall reinforces what it
  delivers in both tenants, so the control's change is what asking twice does alone.

Evidence recall (the share of a question's evidence turns delivered, `bench.locomo`) before
and after, per set and tenant. The pipeline is settled between passes.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
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
    pcm_server,
    progress,
    run_id,
    settle,
)
from bench.locomo import ASK_AFTER, ingest, retrieved_dias
from bench.locomo_data import Conversation, Question, evidence_recall, load
from pcm_client import AsyncPcmClient

Record = dict[str, Any]
SETS = ("judged", "reworded", "held_out")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.feedback", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    ap.add_argument(
        "--missed", action="store_true", help="also send missed for evidence not delivered"
    )
    add_common_args(ap, "feedback.json")
    return ap


def judged(q: Question) -> bool:
    """The fixed half of the questions that gets feedback (by the id's hash, not by order)."""
    return hashlib.sha256(q.qid.encode()).digest()[0] % 2 == 0


def reworded(question: str) -> str:
    return "Can you remind me, " + question[:1].lower() + question[1:]


def asks(conv: Conversation) -> list[tuple[str, Question, str]]:
    """(set, question, text asked) for every ask of one pass."""
    out: list[tuple[str, Question, str]] = []
    for q in conv.questions:
        if judged(q):
            out += [("judged", q, q.question), ("reworded", q, reworded(q.question))]
        else:
            out.append(("held_out", q, q.question))
    return out


def delivered(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [*body["situational_context"], *body.get("episode_context", [])]


def feedback_body(
    body: dict[str, Any], q: Question, by_id: dict[str, set[str]], missed: bool
) -> dict[str, list[str]]:
    """helpful: delivered memories holding evidence; not_helpful: the other delivered ones;
    missed (optional): memories holding evidence the answer lacked."""
    evidence = set(q.evidence)
    shown = {item["memory_id"] for item in delivered(body)}
    out: dict[str, list[str]] = {"helpful": [], "not_helpful": []}
    for mid in shown:
        out["helpful" if by_id.get(mid, set()) & evidence else "not_helpful"].append(mid)
    if missed:
        out["missed"] = [m for m, dias in by_id.items() if dias & evidence and m not in shown]
    return {k: v for k, v in out.items() if v}


async def one_pass(
    c: AsyncPcmClient,
    conv: Conversation,
    by_id: dict[str, set[str]],
    k: int,
    now: datetime,
    label: str,
    quiet: bool,
) -> list[tuple[str, Question, float, dict[str, Any]]]:
    out = []
    for kind, q, text in progress(asks(conv), quiet, desc=label, leave=False):
        body = as_json(await c.recall(text, k=k, now=now))
        out.append((kind, q, evidence_recall(q.evidence, retrieved_dias(body, by_id)), body))
    await settle(c)
    return out


async def run_conversation(
    url: str, conv: Conversation, args: argparse.Namespace
) -> tuple[list[Record], dict[str, int]]:
    records: list[Record] = []
    sent = {"recalls": 0, "helpful": 0, "not_helpful": 0, "missed": 0}
    now = conv.last_at + ASK_AFTER
    for arm in ("feedback", "control"):
        async with client(url, f"{conv.sample_id}-{arm}") as c:  # an API key of `run`
            by_id, _ = await ingest(c, conv)
            await settle(c)
            before = await one_pass(
                c, conv, by_id, args.k, now, f"{conv.sample_id} {arm} 1", args.quiet
            )
            if arm == "feedback":
                for kind, q, _, body in before:
                    fb = feedback_body(body, q, by_id, args.missed) if kind == "judged" else {}
                    if not fb:
                        continue
                    await c.recall_feedback(body["recall_id"], **fb)
                    sent["recalls"] += 1
                    for name, ids in fb.items():
                        sent[name] += len(ids)
                await settle(c)
            after = await one_pass(
                c, conv, by_id, args.k, now, f"{conv.sample_id} {arm} 2", args.quiet
            )
            for (kind, q, r0, _), (_, _, r1, _) in zip(before, after, strict=True):
                records.append(
                    {
                        "arm": arm,
                        "set": kind,
                        "qid": q.qid,
                        "category": q.category,
                        "before": r0,
                        "after": r1,
                    }
                )
    return records, sent


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in ("feedback", "control"):
        for kind in SETS:
            rs = [r for r in records if r["arm"] == arm and r["set"] == kind]
            if not rs:
                continue
            b, a = mean(r["before"] for r in rs), mean(r["after"] for r in rs)
            out.setdefault(arm, {})[kind] = {
                "n": len(rs),
                "before": round(b, 4),
                "after": round(a, 4),
                "change": round(a - b, 4),
                "better": sum(r["after"] > r["before"] for r in rs),
                "worse": sum(r["after"] < r["before"] for r in rs),
            }
    return out


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, _ = load(args.data, args.limit_conversations)
    rid = run_id()
    # API key -> tenant: a tenant per conversation and arm.
    keys = {
        f"{c.sample_id}-{arm}": f"feedback-{c.sample_id}-{arm}-{rid}"
        for c in convs
        for arm in ("feedback", "control")
    }
    log(f"feedback replay: {len(convs)} conversations, k={args.k}")
    records: list[Record] = []
    sent_total: dict[str, int] = {}
    async with pcm_server(base_env(args), keys, inline=args.inline_server) as url:
        for conv in convs:
            recs, sent = await run_conversation(url, conv, args)
            records += recs
            for name, n in sent.items():
                sent_total[name] = sent_total.get(name, 0) + n
    summary = summarize(records)
    for arm, sets in summary.items():
        for kind, row in sets.items():
            log(
                f"  {arm:8} {kind:9} n={row['n']:4} {row['before']:.3f} -> {row['after']:.3f} "
                f"({row['change']:+.3f}; {row['better']} better, {row['worse']} worse)"
            )
    config = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in convs],
        "k": args.k,
        "missed": args.missed,
        "feedback_sent": sent_total,
    }
    return envelope("feedback", command, config, {"summary": summary, "questions": records})


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.feedback", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
