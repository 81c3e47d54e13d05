"""``uv run python -m bench``: LoCoMo (k=10 and 50), precise against standard recall,
latency at 10k, the lifecycle simulation, the surprisal and absence flags; JSON into
bench-results/, tables into docs/benchmarks.md.

Options: ``--only locomo precise latency latency-100k lifecycle outliers routines micro
inspector-100k`` picks parts (latency-100k, the latency run to 100k memories, micro, the
model and vector micro-benchmarks, and inspector-100k, the inspector's pages at 100k
memories, run only when named); ``--quick`` shrinks every part for a smoke run.
Anything after ``--`` is passed to every part (e.g. ``-- --variant hybrid:PCM_HYBRID=1``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench import inspector, latency, lifecycle, locomo, micro, outliers, precise, report
from bench.common import log

DEFAULT_PARTS = ("locomo", "precise", "latency", "lifecycle", "outliers", "routines")
# The generated routine sets (bench/routine_gen): the tune part and the parts held out of
# tuning (blind3 never read), replayed in process (the same services, no HTTP) to keep
# `make bench` short.
ROUTINE_SETS = [
    a
    for split in ("tune", "heldout", "valid", "blind", "blind2", "blind3")
    for a in ("--file", f"bench/routine_gen/data/{split}.outliers_absence.json")
]
QUICK: dict[str, list[str]] = {
    "locomo": ["--limit-conversations", "1"],
    # Two: each conversation's questions are also asked as the other's user.
    "precise": ["--limit-conversations", "2"],
    "latency": [
        "--sizes",
        "1000",
        "--queries",
        "30",
        "--rounds",
        "2",
        "--spaced",
        "5",
        "--segment",
        "500",
        "--single-n",
        "30",
        "--single-repeats",
        "2",
    ],
    "lifecycle": ["--limit-conversations", "1", "--days", "30", "--ask-every", "10"],
    "outliers": ["--data", "plain"],
    "routines": [
        *ROUTINE_SETS[:2],
        "--offline",
        "--protocol",
        "users",
        "--out",
        "bench-results/routines.json",
    ],
    "micro": [],
}
QUICK["latency-100k"] = [*QUICK["latency"], "--out", "bench-results/latency-100k.json"]
QUICK["inspector-100k"] = ["--size", "2000", "--segment", "1000", "--sample", "4", "--runs", "2"]
# The runs docs/benchmarks.md quotes: the default parts take ~45 minutes on 2 cores;
# "latency-100k" (~15-35 minutes more) runs only when named.
DEFAULTS: dict[str, list[str]] = {
    # LoCoMo runs the consolidation job at question time, as the scheduler would have by
    # then (`bench.locomo --jobs`), and keeps the per-question records.
    "locomo": ["--k", "10", "50", "--variant", "pcm", "--details"],
    "precise": ["--k", "10", "--details"],
    "latency": ["--sizes", "10000", "--k", "10", "50"],
    "latency-100k": [
        "--sizes",
        "10000",
        "100000",
        "--k",
        "10",
        "50",
        "--out",
        "bench-results/latency-100k.json",
    ],
    "lifecycle": ["--days", "180", "--modes", "demotion", "deletion", "fresh"],
    "outliers": ["--data", "both"],
    "routines": [*ROUTINE_SETS, "--offline", "--out", "bench-results/routines.json"],
    "micro": [],
    # The memory page and the listing at 100k memories (~15-40 minutes, most of it seeding).
    "inspector-100k": ["--size", "100000", "--browser"],
}
MAINS: dict[str, Callable[..., dict[str, Any]]] = {
    "locomo": locomo.main,
    "precise": precise.main,
    "latency": latency.main,
    "latency-100k": latency.main,  # the latency harness, to 100k, into its own file
    "lifecycle": lifecycle.main,
    "outliers": outliers.main,
    "routines": outliers.main,  # the same replay, on the generated sets
    "micro": micro.main,
    "inspector-100k": inspector.main,
}


def main(argv: Sequence[str] | None = None) -> None:
    raw = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in raw:
        extra = raw[raw.index("--") + 1 :]
        raw = raw[: raw.index("--")]
    ap = argparse.ArgumentParser(
        prog="python -m bench", description="Run the benchmarks; tables into docs/benchmarks.md."
    )
    ap.add_argument("--only", nargs="+", choices=list(MAINS), default=list(DEFAULT_PARTS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = ap.parse_args(raw)
    for part in args.only:
        part_argv = (QUICK if args.quick else DEFAULTS)[part] + (extra if part != "micro" else [])
        t0 = time.perf_counter()
        # The part's own command line, so each table says exactly what produced it.
        own = " ".join(["uv run python -m bench", *raw]).strip()
        module = "outliers" if part == "routines" else part.split("-")[0]
        cmd = f"{own} (runs: uv run python -m bench.{module} {' '.join(part_argv)})"
        MAINS[part](part_argv, command=cmd)
        log(f"{part} done in {time.perf_counter() - t0:.0f} s")
        if not args.no_docs:
            report.update_docs()
    if not args.no_docs:
        log(f"updated {report.DOCS}")


if __name__ == "__main__":
    main()
