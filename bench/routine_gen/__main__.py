"""Command line: write one dataset, all sixteen, or check generated files.

python -m bench.routine_gen --split tune --variant plain --seed 20261204 --out FILE
python -m bench.routine_gen --all bench/routine_gen/data
python -m bench.routine_gen --check [FILE ...]

Without --seed each split uses the seed of its frozen files (FROZEN_SEEDS).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .check import check_path, check_phrasebooks
from .generate import FROZEN_SEEDS, VARIANTS, build_dataset
from .phrasings import SPLITS

DATA_DIR = Path(__file__).parent / "data"


def file_name(split: str, variant: str) -> str:
    return f"{split}.{VARIANTS[variant]}.json"


def write(split: str, variant: str, seed: int, personas: int, out: Path) -> None:
    data = build_dataset(split, variant, seed, personas)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    meta = data["meta"]
    assert isinstance(meta, dict)
    print(f"wrote {out}: {meta['n_memories']} memories, {meta['n_questions']} questions")


def run_check(paths: list[str]) -> int:
    problems, counts = check_phrasebooks()
    print(
        f"families per kind ({'/'.join(SPLITS)}):",
        ", ".join(
            f"{key} " + "/".join(str(c.get(split, "-")) for split in SPLITS)
            for key, c in sorted(counts.items())
        ),
    )
    for problem in problems:
        print("PHRASEBOOK PROBLEM", problem)
    targets = [Path(p) for p in paths] or [
        DATA_DIR / file_name(split, variant) for split in SPLITS for variant in VARIANTS
    ]
    results = [check_path(path) for path in targets]
    return 0 if all(results) and not problems else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.routine_gen",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--split", choices=SPLITS, default="tune")
    parser.add_argument("--variant", choices=tuple(VARIANTS), default="plain")
    parser.add_argument(
        "--seed", type=int, default=None, help="default: the split's frozen seed (FROZEN_SEEDS)"
    )
    parser.add_argument("--personas", type=int, default=12)
    parser.add_argument("--out", type=Path, help="write one dataset to this path")
    parser.add_argument(
        "--all",
        type=Path,
        metavar="DIR",
        help=(
            "write {tune,heldout,valid,blind,blind2,blind3,blind4,blind5}"
            ".{outliers,outliers_absence}.json into DIR"
        ),
    )
    parser.add_argument(
        "--check",
        nargs="*",
        metavar="FILE",
        help="check generated files (default: every split's two files in data/)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check is not None:
        return run_check(args.check)
    if args.personas < 1:
        print("--personas must be at least 1", file=sys.stderr)
        return 2
    if args.all:
        for split in SPLITS:
            for variant in VARIANTS:
                out = args.all / file_name(split, variant)
                seed = FROZEN_SEEDS[split] if args.seed is None else args.seed
                write(split, variant, seed, args.personas, out)
        return 0
    if not args.out:
        print("give --out FILE, --all DIR or --check", file=sys.stderr)
        return 2
    seed = FROZEN_SEEDS[args.split] if args.seed is None else args.seed
    write(args.split, args.variant, seed, args.personas, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
