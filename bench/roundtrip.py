"""Export then import into a fresh store gives the same recall answers (issue 37): the
LoCoMo dev conversations stored in one server, exported (`GET /v1/export`, with vectors),
imported into another server on a fresh Qdrant store and Redis (`POST /v1/import`), then
every scored question asked of both: the same memory ids and texts in
`situational_context`, in the same order, is a match.

    uv run python -m bench.roundtrip [--limit-conversations N] [--limit-questions N]
        [--k 10] [--no-vectors] [--out bench-results/roundtrip.json]

The export is taken before any question is asked (recall reinforces what it returns, in the
sweeper), and the pipeline settles after each question in both stores, so both see the
same reinforcements in the same order. The target tenant has another name (the graph
server is shared by the two servers), so its graph facts are the ones the pipeline
rebuilt from the imported memories' events.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

from bench.common import (
    LOCOMO_PATH,
    add_common_args,
    as_json,
    base_env,
    check_redis_db,
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
from bench.locomo_data import Conversation, evidence_recall, load
from pcm_client import AsyncPcmClient


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.roundtrip", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--limit-questions", type=int, default=None, help="per conversation")
    ap.add_argument("--data", type=Path, default=LOCOMO_PATH)
    ap.add_argument("--no-vectors", action="store_true", help="export without vectors (re-embed)")
    add_common_args(ap, "roundtrip.json")
    return ap


@dataclass(frozen=True)
class Side:
    """One store's server and the key of the tenant a conversation uses there."""

    url: str
    key: str


def answer(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["memory_id"], s["text"]) for s in body["situational_context"]]


async def roundtrip(
    conv: Conversation,
    src: Side,
    dst: Side,
    *,
    k: int,
    vectors: bool,
    limit_questions: int | None = None,
    quiet: bool = True,
) -> dict[str, Any]:
    """Store `conv` in `src`, copy it to `dst` by export and import, ask both its questions;
    returns the counts and the questions whose answers differ."""
    async with client(src.url, src.key) as a, client(dst.url, dst.key) as b:
        by_id, _ = await ingest(a, conv)
        await settle(a)
        t0 = time.perf_counter()
        async with AsyncPcmClient(src.url, src.key, timeout=600) as api:
            lines = [line async for line in api.export(vectors=vectors)]
        t1 = time.perf_counter()
        async with AsyncPcmClient(dst.url, dst.key, timeout=600) as api:
            order = sorted(
                lines[1:],
                key=lambda m: (m["memory"].get("ingested_at", ""), m["memory"].get("seq", 0)),
            )
            imported = await api.import_lines([lines[0], *order])
        t2 = time.perf_counter()
        await settle(b)
        async with AsyncPcmClient(dst.url, dst.key, timeout=600) as api:
            copied = [line async for line in api.export(vectors=vectors)]
        fields = changed_fields(lines, copied)
        now = conv.last_at + ASK_AFTER
        differ: list[dict[str, Any]] = []
        overlap: list[float] = []
        scores: dict[str, list[float]] = {"source": [], "imported": []}
        questions = conv.questions[:limit_questions]
        for q in progress(questions, quiet, desc=conv.sample_id, leave=False):
            answers = {}
            for side, c in (("source", a), ("imported", b)):
                got_body = as_json(await c.recall(q.question, k=k, now=now))
                answers[side] = answer(got_body)
                scores[side].append(evidence_recall(q.evidence, retrieved_dias(got_body, by_id)))
            want, got = answers["source"], answers["imported"]
            ids = {m for m, _ in want}, {m for m, _ in got}
            overlap.append(len(ids[0] & ids[1]) / max(1, len(ids[0] | ids[1])))
            if got != want:
                differ.append({"qid": q.qid, "source": want[:5], "imported": got[:5]})
            await settle(a)
            await settle(b)
    return {
        "conversation": conv.sample_id,
        "memories": len(lines) - 1,
        "imported": imported.imported,
        "reembedded": imported.reembedded,
        "refused": len(imported.refused),
        "export_s": round(t1 - t0, 2),
        "import_s": round(t2 - t1, 2),
        "fields_changed": fields,
        "questions": len(questions),
        "same": len(questions) - len(differ),
        # Of the ids of the two answers, the share both hold (1.0: the same memories).
        "overlap_mean": round(mean(overlap), 4),
        # LoCoMo's evidence recall (bench.locomo) of each side's answers.
        "evidence_recall": {side: round(mean(v), 4) for side, v in scores.items()},
        "differ": differ,
    }


def changed_fields(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, int]:
    """Per top-level record field (and `vector`), how many memories the copy holds with
    another value than the export had: what the target's pipeline made differently."""
    had = {line["memory"]["id"]: line for line in before[1:]}
    out: dict[str, int] = {}
    for line in after[1:]:
        old = had.get(line["memory"]["id"])
        if old is None:
            out["(new)"] = out.get("(new)", 0) + 1
            continue
        diff = _changed(old["memory"], line["memory"])
        if old.get("vector") != line.get("vector"):
            diff.append("vector")
        for k in diff:
            out[k] = out.get(k, 0) + 1
    return out


def _changed(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """The fields (`a.b` inside an object) whose values differ, leaving out the times the
    pipeline stamps its own work with (`extracted_at`, `judged_at`): a copy's differ by
    nature."""
    out: list[str] = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if k in ("extracted_at", "judged_at") or a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict) and not prefix:
            out += _changed(a, b, f"{k}.")
        else:
            out.append(prefix + k)
    return out


def _next_db(url: str) -> str:
    """The Redis URL of the database after `url`'s (the target server's own)."""
    parts = urlparse(url)
    db = int(parts.path.strip("/") or "0")
    return urlunparse(parts._replace(path=f"/{db + 1}"))


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    convs, _ = load(args.data, args.limit_conversations)
    env = base_env(args)
    rid = run_id()
    src_keys = {c.sample_id: f"rt-src-{c.sample_id}-{rid}" for c in convs}
    dst_keys = {c.sample_id: f"rt-dst-{c.sample_id}-{rid}" for c in convs}
    dst_env = {**env, "REDIS_URL": _next_db(env["REDIS_URL"])}
    check_redis_db(dst_env["REDIS_URL"])
    results = []
    async with (
        pcm_server(env, src_keys, inline=args.inline_server) as src_url,
        pcm_server(dst_env, dst_keys, inline=args.inline_server) as dst_url,
    ):
        for conv in convs:
            out = await roundtrip(
                conv,
                Side(src_url, conv.sample_id),
                Side(dst_url, conv.sample_id),
                k=args.k,
                vectors=not args.no_vectors,
                limit_questions=args.limit_questions,
                quiet=args.quiet,
            )
            log(f"{conv.sample_id}: {out['same']}/{out['questions']} answers the same")
            results.append(out)
    total: int = sum(r["questions"] for r in results)
    same = sum(r["same"] for r in results)
    config = {
        "data": str(args.data),
        "k": args.k,
        "vectors": not args.no_vectors,
        "limit_questions": args.limit_questions,
        "env": env,
    }
    weights: list[int] = [r["questions"] for r in results]

    def weighted(values: list[float]) -> float:
        """`values` (one per conversation) weighted by its questions."""
        return round(sum(v * w for v, w in zip(values, weights, strict=True)) / total, 4)

    summary = {
        "questions": total,
        "same": same,
        "overlap_mean": weighted([r["overlap_mean"] for r in results]),
        "evidence_recall": {
            side: weighted([r["evidence_recall"][side] for r in results])
            for side in ("source", "imported")
        },
        "conversations": results,
    }
    log(f"same answers: {same}/{total}, overlap {summary['overlap_mean']}")
    return envelope("roundtrip", command, config, summary)


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    return cli_main("bench.roundtrip", parser, run, argv, command)


if __name__ == "__main__":
    main()
