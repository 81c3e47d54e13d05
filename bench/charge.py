"""Which queries state-dependent recall charges: precision and recall of the charge on a
labelled set of urgent and calm queries (`bench/data/charge_queries.jsonl`, a tuning part
and a held-out part written before the mechanism), with the recall service's own
functions and embedder. No server.

    uv run python -m bench.charge [--offset X --span Y] [--out bench-results/charge.json]

Three charges side by side: `cues` (arousal or complexity from words and form, the rule
before issue 36), `meaning` (the prototype margin alone) and `urgency` (the recall's: the
higher of arousal and the margin's level; complexity no longer charges). A query is
charged when its level passes `PCM_AFFECT_MIN_CHARGE` (0.5)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcm_common.domain import affect
from pcm_common.models.affect import classify
from pcm_common.models.embeddings import Embedder
from pcm_common.models.urgency import UrgencyPrototypes
from pcm_recall.settings import RecallSettings

DATA = Path(__file__).parent / "data" / "charge_queries.jsonl"


def scores(rows: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """Precision and recall of `charged` against `urgent` over (urgent, charged) pairs."""
    tp = sum(1 for u, c in rows if u and c)
    fp = sum(1 for u, c in rows if c and not u)
    fn = sum(1 for u, c in rows if u and not c)
    return {
        "n": len(rows),
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "false_charges": fp,
        "missed": fn,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    s = RecallSettings()
    offset = s.affect_urgency_offset if args.offset is None else args.offset
    span = s.affect_urgency_span if args.span is None else args.span
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    emb = Embedder()
    protos = UrgencyPrototypes(emb)
    qvecs = await emb.embed_queries([r["query"] for r in rows])
    out_rows = []
    for r, qvec in zip(rows, qvecs, strict=True):
        mood = classify(r["query"])
        margin = await protos.margin(qvec)
        back = affect.retrospective(r["query"])
        level = affect.urgency(mood.arousal, margin, offset=offset, span=span, looks_back=back)
        meaning = affect.urgency(0.0, margin, offset=offset, span=span, looks_back=back)
        out_rows.append(
            {
                **r,
                "margin": round(margin, 4),
                "arousal": mood.arousal,
                "complexity": mood.complexity,
                "level": round(level, 4),
                "charged": {
                    "cues": affect.charge(mood, s.affect_min_charge) > 0,
                    "meaning": meaning > s.affect_min_charge,
                    "urgency": level > s.affect_min_charge,
                },
            }
        )
    result: dict[str, Any] = {"offset": offset, "span": span, "min_charge": s.affect_min_charge}
    for split in ("tune", "heldout"):
        part = [r for r in out_rows if r["split"] == split]
        result[split] = {
            rule: scores([(r["urgent"], r["charged"][rule]) for r in part])
            for rule in ("cues", "meaning", "urgency")
        }
        result[split]["errors"] = [
            {"query": r["query"], "urgent": r["urgent"], "margin": r["margin"]}
            for r in part
            if r["urgent"] != r["charged"]["urgency"]
        ]
    if args.details:
        result["queries"] = out_rows
    return result


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.charge", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--offset", type=float, default=None, help="margin read as level 0.5")
    ap.add_argument("--span", type=float, default=None, help="margin above offset for 1.0")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    result = asyncio.run(run(args))
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
