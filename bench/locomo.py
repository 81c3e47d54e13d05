"""LoCoMo retrieval benchmark (no LLM): evidence recall, hit rate, prompt tokens, latency.

    uv run python -m bench.locomo [--k 10 50] [--limit-conversations N]
        [--variant NAME:KEY=VAL,...] [--env KEY=VAL] [--out bench-results/locomo.json]

Every turn is stored as one memory through ``POST /v1/memories:batch`` (one batch per
session), the pipeline settles, and each question of categories 1-4 is recalled with
``now`` just after the last session. BM25 (bm25s) and exact dense cosine (the service's
embedder) top-k run on the same turns in the same invocation, as baselines.

Each (variant, k) gets fresh tenants: recall reinforces what it returns (in the sweeper), so
reusing a store would let the k=10 questions change the k=50 ranking. Within one run the
pipeline is settled after every question, so that reinforcement is applied in question
order and reruns are deterministic.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np

from bench.common import (
    LOCOMO_PATH,
    add_common_args,
    as_json,
    base_env,
    cli_main,
    client,
    dated_line,
    envelope,
    log,
    mean,
    median,
    pcm_server,
    pct,
    progress,
    run_id,
    run_jobs,
    settle,
    stage_medians,
    variants_of,
)
from bench.locomo_data import Conversation, Question, evidence_recall, load
from pcm_client import AsyncPcmClient
from pcm_client.calls import RecallFields
from pcm_client.models import RecallMode
from pcm_common.text.tokens import count_tokens

Record = dict[str, Any]
# "Just after the last session": the questions come an hour after the last turn.
ASK_AFTER = timedelta(hours=1)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    ap.add_argument(
        "--turn-spacing-s",
        type=float,
        default=0.0,
        help="date turn i of a session at session time + i*spacing (0: protocol, one time)",
    )
    ap.add_argument(
        "--no-settle-each",
        action="store_true",
        help="do not wait for reinforcement after each question (faster, order-dependent)",
    )
    ap.add_argument(
        "--jobs",
        nargs="*",
        default=["consolidation"],
        help="lifecycle jobs run at the question time before asking (as the scheduler would "
        "have by then); unknown ones are skipped",
    )
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--details", action="store_true", help="keep per-question records")
    add_common_args(ap, "locomo.json")
    return ap


# ---- scoring ------------------------------------------------------------------------------


def summarize(records: Sequence[Record], names: dict[int, str]) -> dict[str, Any]:
    """Per category and overall: evidence recall, hit rate, mean prompt tokens (+ latency)."""
    groups: dict[str, list[Record]] = {"overall": list(records)}
    for r in records:
        groups.setdefault(names.get(r["category"], str(r["category"])), []).append(r)
    out: dict[str, Any] = {}
    for name, rs in groups.items():
        row: dict[str, Any] = {
            "n": len(rs),
            "evidence_recall": round(mean(r["recall"] for r in rs), 4),
            "hit_rate": round(mean(float(r["hit"]) for r in rs), 4),
            "tokens_mean": round(mean(r["tokens"] for r in rs), 1),
        }
        if rs and "latency_ms" in rs[0]:
            lat = [r["latency_ms"] for r in rs]
            row["latency_ms_p50"] = round(median(lat), 2)
            row["latency_ms_p95"] = round(pct(lat, 95), 2)
        out[name] = row
    return out


def context_tokens(conv: Conversation, idx: Sequence[int]) -> int:
    """Tokens of k turns rendered as the service renders situational lines."""
    turns = sorted((conv.turns[i] for i in idx), key=lambda t: t.created_at)
    lines = ["[SITUATIONAL CONTEXT]", *(dated_line(t.created_at, t.text) for t in turns)]
    return count_tokens("\n".join(lines))


def baseline_record(
    system: str, q: Question, k: int, conv: Conversation, idx: Sequence[int]
) -> Record:
    got = {conv.turns[i].dia_id for i in idx}
    rec = evidence_recall(q.evidence, got)
    return {
        "system": system,
        "qid": q.qid,
        "category": q.category,
        "k": k,
        "recall": rec,
        "hit": rec == 1.0,
        "tokens": context_tokens(conv, idx),
    }


# ---- baselines ----------------------------------------------------------------------------


def bm25_topk(conv: Conversation, ks: Sequence[int]) -> list[Record]:
    import bm25s
    from bm25s.tokenization import Tokenizer

    tok = Tokenizer(stopwords="en")
    corpus = tok.tokenize(
        [t.text for t in conv.turns], update_vocab=True, return_as="ids", show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    queries = tok.tokenize(
        [q.question for q in conv.questions],
        update_vocab=False,
        return_as="ids",
        show_progress=False,
    )
    kmax = min(max(ks), len(conv.turns))
    docs, _ = retriever.retrieve(queries, k=kmax, show_progress=False)
    out = []
    for qi, q in enumerate(conv.questions):
        for k in ks:
            out.append(baseline_record("bm25", q, k, conv, [int(i) for i in docs[qi][:k]]))
    return out


async def dense_topk(conv: Conversation, ks: Sequence[int]) -> list[Record]:
    """Exact cosine over every turn with the service's embedder (same model, same path)."""
    from pcm_common.models.embeddings import Embedder

    emb = Embedder()
    d = np.asarray(await emb.embed([t.text for t in conv.turns]), dtype=np.float32)
    q = np.asarray(await emb.embed_queries([q.question for q in conv.questions]), dtype=np.float32)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    order = np.argsort(-(q @ d.T), axis=1, kind="stable")
    out = []
    for qi, question in enumerate(conv.questions):
        for k in ks:
            out.append(baseline_record("dense", question, k, conv, order[qi][:k].tolist()))
    return out


# ---- PCM through its client (pcm-client) -------------------------------------------------


async def ingest(
    c: AsyncPcmClient, conv: Conversation
) -> tuple[dict[str, set[str]], dict[str, int]]:
    """One batch per session; returns memory_id -> dia_ids (merges map several turns to one
    id) and the count of each store status."""
    by_id: dict[str, set[str]] = {}
    statuses: dict[str, int] = {}
    episodes: dict[str, list[int]] = {}
    for i, t in enumerate(conv.turns):
        episodes.setdefault(t.episode, []).append(i)
    for idx in episodes.values():
        memories = [
            {
                "text": conv.turns[i].text,
                "created_at": conv.turns[i].created_at.isoformat(),
                "episode": conv.turns[i].episode,
                "metadata": {"dia_id": conv.turns[i].dia_id},
            }
            for i in idx
        ]
        results = (await c.store_batch(memories)).results
        for i, res in zip(idx, results, strict=True):
            if res.id is not None:  # None: a write the scope declined (none here)
                by_id.setdefault(res.id, set()).add(conv.turns[i].dia_id)
            statuses[res.status] = statuses.get(res.status, 0) + 1
    return by_id, statuses


def retrieved_dias(body: dict[str, Any], by_id: dict[str, set[str]]) -> set[str]:
    got: set[str] = set()
    for item in [*body["situational_context"], *body.get("episode_context", [])]:
        meta = item.get("metadata") or {}
        # A consolidated episode record stands for its sources (their turns are its text).
        for mid in [item["memory_id"], *meta.get("sources", [])]:
            got |= by_id.get(mid, set())
        if item["memory_id"] not in by_id and meta.get("dia_id"):
            got.add(meta["dia_id"])
    return got


async def distilled_facts(c: AsyncPcmClient, by_id: dict[str, set[str]]) -> int:
    """Distilled facts (`kind: "fact"`) stand for the turns they came from, as episode
    records do: each fact's id is mapped to its sources' turns. Returns how many."""
    n = 0
    async for m in c.iter_memories(page_size=500):
        if m.get("kind") == "fact":
            n += 1
            by_id[m["id"]] = set().union(*(by_id.get(s, set()) for s in m["sources"]))
    return n


def associated_dias(body: dict[str, Any], by_id: dict[str, set[str]]) -> set[str]:
    """The turns of the answer's associations (associative recall)."""
    return {d for a in body.get("associations", []) for d in by_id.get(a["memory_id"], set())}


async def run_pcm_k(
    url: str,
    keys: dict[str, str],
    convs: Sequence[Conversation],
    k: int,
    settle_each: bool,
    quiet: bool,
    jobs: Sequence[str] = (),
    mode: str = "focused",
) -> tuple[list[Record], dict[str, Any]]:
    """`mode` other than focused is sent as the recall's `mode` (`bench.associative`), and
    each record also holds the evidence recall with the answer's associations added."""
    records: list[Record] = []
    extra: RecallFields = {} if mode == "focused" else {"mode": cast(RecallMode, mode)}
    ingest_stats: dict[str, Any] = {"turns": 0, "seconds": 0.0, "statuses": {}, "jobs": {}}
    for conv in convs:
        async with client(url, keys[conv.sample_id]) as c:
            t0 = time.perf_counter()
            by_id, statuses = await ingest(c, conv)
            await settle(c)
            ingest_stats["seconds"] += time.perf_counter() - t0
            ingest_stats["turns"] += len(conv.turns)
            for s, n in statuses.items():
                ingest_stats["statuses"][s] = ingest_stats["statuses"].get(s, 0) + n
            at = conv.last_at + ASK_AFTER
            if jobs:
                for name, n in (await run_jobs(c, jobs, at)).items():
                    ingest_stats["jobs"][name] = ingest_stats["jobs"].get(name, 0) + n
                await settle(c)
                facts = await distilled_facts(c, by_id)
                ingest_stats["facts"] = ingest_stats.get("facts", 0) + facts
            for q in progress(conv.questions, quiet, desc=f"k={k} {conv.sample_id}", leave=False):
                t = time.perf_counter()
                fields: RecallFields = {"k": k, "now": at, **extra}
                out = await c.recall(q.question, **fields)
                latency = (time.perf_counter() - t) * 1000
                body = as_json(out)
                got = retrieved_dias(body, by_id)
                rec = evidence_recall(q.evidence, got)
                records.append(
                    {
                        "system": "pcm",
                        "qid": q.qid,
                        "category": q.category,
                        "k": k,
                        "recall": rec,
                        "hit": rec == 1.0,
                        "tokens": count_tokens(body["prompt"]),
                        "latency_ms": round(latency, 3),
                        "timings_ms": body.get("timings_ms", {}),
                        "n_situational": len(body["situational_context"]),
                        "n_episode": len(body.get("episode_context", [])),
                        "empty": bool(body.get("empty")),
                        # Which evidence turns the answer lacked: where to look first.
                        "missed": sorted(set(q.evidence) - got),
                    }
                )
                if extra:
                    added = associated_dias(body, by_id)
                    records[-1]["recall_assoc"] = evidence_recall(q.evidence, got | added)
                    records[-1]["n_assoc"] = len(body.get("associations", []))
                if settle_each:
                    await settle(c)
    s = ingest_stats["seconds"]
    ingest_stats["memories_per_s"] = round(ingest_stats["turns"] / s, 1) if s else None
    ingest_stats["seconds"] = round(s, 2)
    return records, ingest_stats


def pcm_extras(records: Sequence[Record]) -> dict[str, Any]:
    return {
        "server_timings_ms_median": stage_medians([r["timings_ms"] for r in records]),
        "situational_mean": round(mean(r["n_situational"] for r in records), 2),
        "episode_mean": round(mean(r["n_episode"] for r in records), 2),
        "empty_share": round(mean(float(r["empty"]) for r in records), 4),
    }


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, names = load(args.data, args.limit_conversations, args.turn_spacing_s)
    ks = sorted(set(args.k))
    n_q = sum(len(c.questions) for c in convs)
    log(
        f"LoCoMo: {len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, "
        f"{n_q} scored questions, k={ks}"
    )
    results: dict[str, Any] = {"baselines": {}, "variants": {}}
    details: list[Record] = []

    if not args.no_baselines:
        base: list[Record] = []
        for conv in progress(convs, args.quiet, desc="baselines"):
            base += bm25_topk(conv, ks)
            base += await dense_topk(conv, ks)
        for system in ("bm25", "dense"):
            results["baselines"][system] = {
                str(k): summarize([r for r in base if r["system"] == system and r["k"] == k], names)
                for k in ks
            }
        details += base

    env = base_env(args)
    for variant in variants_of(args):
        rid = run_id()
        # One tenant per conversation and k: see the module docstring.
        keys = {
            f"{c.sample_id}-k{k}": f"locomo-{c.sample_id}-k{k}-{rid}" for c in convs for k in ks
        }
        log(f"variant {variant.name}: {variant.env or '(service defaults)'}")
        per_k: dict[str, Any] = {}
        async with pcm_server({**env, **variant.env}, keys, inline=args.inline_server) as url:
            for k in ks:
                k_keys = {c.sample_id: f"{c.sample_id}-k{k}" for c in convs}
                recs, ing = await run_pcm_k(
                    url, k_keys, convs, k, not args.no_settle_each, args.quiet, args.jobs
                )
                per_k[str(k)] = {
                    "summary": summarize(recs, names),
                    **pcm_extras(recs),
                    "ingest": ing,
                }
                o = per_k[str(k)]["summary"]["overall"]
                log(
                    f"  k={k}: recall {o['evidence_recall']:.3f} hit {o['hit_rate']:.3f} "
                    f"tokens {o['tokens_mean']:.0f} p50 {o['latency_ms_p50']:.1f} ms"
                )
                details += [{**r, "variant": variant.name} for r in recs]
        results["variants"][variant.name] = {"env": variant.env, "k": per_k}

    config = {
        "data": str(args.data),
        "conversations": [c.sample_id for c in convs],
        "turns": sum(len(c.turns) for c in convs),
        "questions": n_q,
        "k": ks,
        "turn_spacing_s": args.turn_spacing_s,
        "ask_after_last_session_h": ASK_AFTER.total_seconds() / 3600,
        "settle_each_question": not args.no_settle_each,
        "jobs_before_questions": args.jobs,
        "env": env,
    }
    out = envelope("locomo", command, config, results)
    if args.details:
        out["questions"] = details
    return out


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.locomo", parser, run, argv, command)


if __name__ == "__main__":
    main()
    sys.exit(0)
