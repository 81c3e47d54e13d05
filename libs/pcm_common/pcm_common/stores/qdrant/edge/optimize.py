"""Qdrant Edge's HNSW build in a child process, on a copy of the shard.

`EdgeShard.optimize()` holds the interpreter lock for the whole build (seconds), so in the
embedded server every request, stream read and health probe waited for it. The adapter
(`EdgeVectorStore`) therefore copies the flushed shard next to itself, lets this module's
`main` build the index on the copy in another process, and swaps the copy in, with the
writes made meanwhile applied to it first (`swap`). Reads never stop except for the swap;
writes stop while the shard is copied. Measurements, and why it is off by default:
docs/decisions/0003-edge-index-build-in-process.md.

A crash at any point leaves either the original shard or the finished copy in place:
`recover` (run before every open) puts the original back if the swap was cut between its
two renames; a copy left by an unfinished optimize is replaced by the next one.

Run as `python -m pcm_common.stores.qdrant.edge.optimize PATH --dim N --max-segment-kb KB
--indexing-threshold-kb KB`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

# The copy being optimized, and the original while the copy takes its place.
COPY_SUFFIX = ".optimizing"
OLD_SUFFIX = ".pre-optimize"


def sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def recover(path: Path) -> None:
    """Undo what an interrupted swap left next to `path` (idempotent). A leftover copy is
    left alone (the next optimize replaces it): it may be another store's build."""
    old = sibling(path, OLD_SUFFIX)
    if old.exists() and not path.exists():
        old.rename(path)  # cut between the swap's renames: the original is whole
    if old.exists():
        shutil.rmtree(old)  # the swap finished; its clean-up did not


def copy_shard(path: Path) -> Path:
    """A copy of the (flushed, not being written) shard at `path`, next to it."""
    copy = sibling(path, COPY_SUFFIX)
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(path, copy)
    return copy


def optimize_copy(
    copy: Path, dim: int, max_segment_kb: int, timeout_s: float, indexing_threshold_kb: int = 0
) -> None:
    """Build the index of the shard at `copy` in a child process; raises on failure."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pcm_common.stores.qdrant.edge.optimize",
            str(copy),
            "--dim",
            str(dim),
            "--max-segment-kb",
            str(max_segment_kb),
            "--indexing-threshold-kb",
            str(indexing_threshold_kb),
        ],
        check=True,
        capture_output=True,
        timeout=timeout_s,
    )


def swap(path: Path, copy: Path) -> None:
    """Put the (closed) copy in place of the (closed) shard at `path`: two renames, then
    the original is removed. `recover` completes or undoes a cut one."""
    old = sibling(path, OLD_SUFFIX)
    path.rename(old)
    copy.rename(path)
    shutil.rmtree(old)


def main(argv: Sequence[str] | None = None) -> int:
    from pcm_common.stores.qdrant.edge.shard import edge_config

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--max-segment-kb", type=int, default=0)
    ap.add_argument("--indexing-threshold-kb", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    config = edge_config(args.dim, args.max_segment_kb, args.indexing_threshold_kb)
    shard = qe.EdgeShard.load(str(args.path), config)
    try:
        shard.optimize()
        shard.flush()
    finally:
        shard.close()
    print(f"optimized {args.path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
