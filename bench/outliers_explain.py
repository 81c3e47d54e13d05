"""What the anomaly flags got wrong on one data set, item by item (offline, local judge).

    uv run python -m bench.outliers_explain \
        --file bench/routine_gen/data/tune.outliers_absence.json \
        --store /tmp/pcm-explain/tune [--rejudge] [--out explain.json]

Prints every missed outlier (its text, verdict and usual pattern), every stopped routine not
flagged, every continuing routine flagged stopped and every false surprise flag a question
carried (with the routine it belongs to). `--store` keeps the ingested, judged shard so that a
change of judging rules is tried again in a minute with `--rejudge`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.outliers import Replay, run_offline, score


def _verdict(payload: dict[str, Any]) -> dict[str, Any]:
    s = payload.get("surprisal") or {}
    keep = ("score", "reason", "usual", "kind", "components")
    return {k: s[k] for k in keep if k in s} | {"family": len(s.get("family_ids") or [])}


def explain(data: dict[str, Any], replays: dict[str, Replay]) -> dict[str, Any]:
    """The misses of `score`, with texts."""
    text_of = {m["memory_id"]: m["text"] for m in data["memories"]}
    by_routine: dict[str, list[dict[str, Any]]] = defaultdict(list)
    routine_of: dict[str, str | None] = {}
    for m in data["memories"]:
        sid = replays[m["persona"]].ids.get(m["memory_id"])
        if sid is not None:
            routine_of[f"{m['persona']}:{sid}"] = m["routine_id"]
        if m["routine_id"]:
            by_routine[m["routine_id"]].append(m)
    missed: list[dict[str, Any]] = []
    false: list[dict[str, Any]] = []
    stopped: list[dict[str, Any]] = []
    for q in data["questions"]:
        rep = replays[q["persona"]]
        out = rep.answers.get(q["question_id"])
        if out is None:
            continue
        flags = out["anomaly_flags"]
        own = {rep.ids.get(m["memory_id"]) for m in by_routine[q["routine_id"]]}
        exp = q["expected"]
        if exp == "stopped":
            if not any(f["kind"] == "stopped_routine" and f["memory_id"] in own for f in flags):
                stopped.append({"question": q["text"], "routine": q["routine_id"], "miss": True})
        elif any(f["kind"] == "stopped_routine" and f["memory_id"] in own for f in flags):
            stopped.append({"question": q["text"], "routine": q["routine_id"], "miss": False})
        if exp and exp != "stopped":
            sid = rep.ids.get(exp)
            if not any(f["memory_id"] == sid for f in flags):
                entries = by_routine[q["routine_id"]]
                missed.append(
                    {
                        "kind": q["expected_kind"],
                        "routine": q["routine_id"],
                        "text": text_of[exp],
                        "verdict": _verdict(rep.payloads.get(sid or "", {})),
                        "recalled": sid in {c["memory_id"] for c in out["situational_context"]},
                        "earlier": [m["text"] for m in entries if m["memory_id"] < exp][-4:],
                    }
                )
        outliers = {rep.ids.get(m["memory_id"]) for m in data["memories"] if m["is_outlier"]}
        for f in flags:
            if f["kind"] != "surprise" or f["memory_id"] in outliers:
                continue
            payload = rep.payloads.get(f["memory_id"], {})
            false.append(
                {
                    "question": q["text"],
                    "routine": q["routine_id"],
                    "flag_routine": routine_of.get(f"{q['persona']}:{f['memory_id']}"),
                    "text": payload.get("text"),
                    "verdict": _verdict(payload),
                }
            )
    return {"missed": missed, "false_flags": false, "stopped": stopped}


def _print(report: dict[str, Any]) -> None:
    for m in report["missed"]:
        print(f"MISS {m['kind']:<8} {m['routine']}  recalled={m['recalled']}")
        print(f"     {m['text']}")
        print(f"     verdict {json.dumps(m['verdict'], default=str)[:300]}")
        for e in m["earlier"]:
            print(f"       < {e}")
    for s in report["stopped"]:
        tag = "STOPPED-MISS" if s["miss"] else "CONTINUING-FLAGGED"
        print(f"{tag} {s['routine']}  q: {s['question']}")
    for f in report["false_flags"]:
        print(f"FALSE {f['routine']} -> {f['flag_routine']}  q: {f['question']}")
        print(f"     {f['text']}")
        print(f"     verdict {json.dumps(f['verdict'], default=str)[:300]}")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.outliers_explain", description=__doc__)
    ap.add_argument("--file", type=Path, required=True)
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--rejudge", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    data = json.loads(args.file.read_text())
    replays = asyncio.run(run_offline(data, "local", 50, False, False, args.store, args.rejudge))
    report = explain(data, replays)
    _print(report)
    summary = score(data, replays)
    print(json.dumps({k: summary[k] for k in ("flagged", "judged", "questions_with_false_flag")}))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, **report}, indent=1, default=str))


if __name__ == "__main__":
    main()
