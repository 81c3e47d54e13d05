"""The predictive capture gate on hook transcripts (issue 36, item 4): how many useful
captures it keeps and how much chatter it skips.

    uv run python -m bench.capture_gate [--set tune heldout] [--threshold X]
        [--sweep] [--out bench-results/capture_gate.json]

The transcripts (`bench/data/capture_gate/`) are sessions of hook captures as the Claude
Code hooks send them (prompts, and failed tool calls as "Tool X failed: `call` -> error"),
each labelled `useful` (a fact, a decision or preference, a first-seen error) or `chatter`
(acknowledgements, steering, requests that state nothing, tool noise: a missing file, an
empty search, an interrupted call, the same failure again). `tune.jsonl` chose the
weights and threshold; `heldout.jsonl` was written before the gate and never tuned on.

Replayed in process through the ingest service's own write path (`IngestService.store`,
`source: "hook"`, one project and `session_id` per session, in order) on the local
embedding model, the in-memory vector store and a fakeredis, so each capture sees the
session's earlier captures and the memories kept before it, as on a server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, envelope, log, write_json

DATA = Path(__file__).resolve().parent / "data" / "capture_gate"
SETS = ("tune", "heldout")
TARGET_KEPT, TARGET_SKIPPED = 0.95, 0.60


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line]


async def replay(rows: list[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    """Each capture's answer from the write path, in order."""
    import fakeredis

    from pcm_common.models.embeddings import Embedder
    from pcm_common.runtime.telemetry import configure_logging
    from pcm_common.testing.ports import MemoryPorts
    from pcm_ingest.schemas import MemoryIn
    from pcm_ingest.service import IngestService
    from pcm_ingest.settings import IngestSettings

    configure_logging("WARNING")
    extra: dict[str, Any] = {} if threshold is None else {"capture_salience_threshold": threshold}
    settings = IngestSettings(firewall_workers=0, auto_episodes=False, **extra)
    ports = MemoryPorts(redis=fakeredis.FakeAsyncRedis(), embedder=Embedder())  # type: ignore[arg-type]
    svc = IngestService(ports, settings)
    run = uuid.uuid4().hex[:6]
    out: list[dict[str, Any]] = []
    for row in rows:
        item = MemoryIn(
            text=row["text"],
            source="hook",
            scope="project",
            project=f"{row['session']}-{run}",
            metadata={"hook": "UserPromptSubmit", "session_id": f"{row['session']}-{run}"},
        )
        result = (await svc.store("bench", [item]))[0]
        out.append(
            {**row, "status": result.status, "reason": result.reason, "salience": result.salience}
        )
    return out


def score(answers: list[dict[str, Any]]) -> dict[str, Any]:
    useful = [a for a in answers if a["label"] == "useful"]
    chatter = [a for a in answers if a["label"] == "chatter"]
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a in answers:
        kept = a["status"] != "skipped"
        by_kind[a["kind"]][0] += kept
        by_kind[a["kind"]][1] += 1
    kept = sum(a["status"] != "skipped" for a in useful) / max(1, len(useful))
    skipped = sum(a["status"] == "skipped" for a in chatter) / max(1, len(chatter))
    return {
        "captures": len(answers),
        "useful": len(useful),
        "chatter": len(chatter),
        "useful_kept": round(kept, 4),
        "chatter_skipped": round(skipped, 4),
        "meets_target": kept >= TARGET_KEPT and skipped >= TARGET_SKIPPED,
        "kept_by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
        "skipped_by": {
            r: sum(a["reason"] == r for a in answers) for r in ("capture_gate", "low_salience")
        },
        "misses": [
            {k: a[k] for k in ("text", "label", "kind", "salience")}
            for a in answers
            if (a["label"] == "useful") == (a["status"] == "skipped")
        ],
    }


async def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in args.set:
        rows = load(name)
        if args.sweep:
            results[name] = {}
            for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55):
                r = score(await replay(rows, t))
                r.pop("misses")
                results[name][str(t)] = r
                log(f"{name} t={t}: kept {r['useful_kept']}, skipped {r['chatter_skipped']}")
            continue
        results[name] = score(await replay(rows, args.threshold))
        r = results[name]
        log(f"{name}: useful kept {r['useful_kept']}, chatter skipped {r['chatter_skipped']}")
    config = {"sets": args.set, "threshold": args.threshold, "sweep": args.sweep}
    return envelope("capture_gate", command, config, results)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.capture_gate", description=__doc__)
    ap.add_argument("--set", nargs="+", choices=SETS, default=list(SETS))
    ap.add_argument("--threshold", type=float, default=None, help="default: the setting's")
    ap.add_argument("--sweep", action="store_true", help="a row per threshold (tuning)")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "capture_gate.json")
    return ap


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    command = "uv run python -m bench.capture_gate " + " ".join(argv or sys.argv[1:])
    out = asyncio.run(run(args, command.strip()))
    write_json(args.out, out)
    return out


if __name__ == "__main__":
    main()
