"""What a server process and its children use, read from /proc (Linux): resident memory
and CPU seconds, for the load benchmark's samples (`bench.load`). No psutil: these are
three files the kernel already formats."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Usage:
    """One reading of a process tree: `rss_bytes` of its root and of the whole tree
    (shared pages counted once per process, as `ps` does), CPU seconds of the tree."""

    root_rss_bytes: int
    tree_rss_bytes: int
    tree_cpu_s: float
    processes: int


def _parents() -> dict[int, int]:
    out: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The command name may hold spaces and parentheses: split after the last ")".
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        out[int(stat.parent.name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """`pid`'s live children, grandchildren, ... (not `pid` itself)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def child_running(parent: int, needle: str) -> int | None:
    """The first child of `parent` whose command line holds `needle` (the `pcm dev`
    server that `pcm_cli.testing.server_process` started), else None."""
    for p in descendants(parent):
        try:
            cmdline = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in cmdline:
            return p
    return None


def rss_bytes(pid: int) -> int:
    """Resident memory of one process (0 once it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def usage(pid: int) -> Usage:
    """A reading of `pid` and its descendants (the server's parse process, an index-build
    child)."""
    tree = [pid, *descendants(pid)]
    rss = [rss_bytes(p) for p in tree]
    return Usage(
        root_rss_bytes=rss[0],
        tree_rss_bytes=sum(rss),
        tree_cpu_s=sum(cpu_s(p) for p in tree),
        processes=sum(1 for r in rss if r),
    )
