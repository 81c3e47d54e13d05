"""Runs the colleagues' model and vector-store micro-benchmarks (scripts/bench_models.py,
scripts/bench_vectors.py) and keeps their output for docs/benchmarks.md.

    uv run python -m bench.micro [--out bench-results/micro.json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, command_line, envelope, log, write_json

SCRIPTS = (
    ["scripts/bench_models.py"],
    ["scripts/bench_vectors.py"],
)


def run_script(args: list[str]) -> dict[str, Any]:
    log(f"running {' '.join(args)}")
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=False, timeout=1800
    )
    # Library warnings go to stderr; the scripts print their figures on stdout.
    output = proc.stdout if proc.returncode == 0 else proc.stdout + proc.stderr
    return {"command": "uv run python " + " ".join(args), "rc": proc.returncode, "output": output}


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.micro", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "micro.json")
    args = ap.parse_args(argv)
    runs = [run_script(list(s)) for s in SCRIPTS]
    out = envelope("micro", command or command_line("bench.micro", argv), {}, runs)
    write_json(args.out, out)
    return out


if __name__ == "__main__":
    main()
