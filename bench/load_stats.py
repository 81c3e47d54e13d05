"""The load benchmark's figures from its raw records (`bench.load`): per operation counts,
throughput, latency percentiles and errors by status; the same over time windows; how much
the server's resident memory grew while under load. Pure functions, unit-tested."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.common import median, pct

OK = "ok"


@dataclass(frozen=True)
class OpRecord:
    """One request: its operation ("write", "batch", "recall"), when it started (seconds
    since the load began), how long it took, and "ok" or what went wrong (the HTTP status,
    or the client's error name where nothing answered)."""

    op: str
    start_s: float
    ms: float
    outcome: str


@dataclass(frozen=True)
class Sample:
    """One reading of the server while the benchmark runs: seconds since the load began
    (negative: before, while seeding), resident memory of the server process and of its
    tree in MB, its tree's CPU seconds so far, and the pipeline's backlog (entries still to
    process, all consumer groups)."""

    t_s: float
    rss_mb: float
    tree_rss_mb: float
    cpu_s: float
    backlog: int


def op_summary(records: Sequence[OpRecord], seconds: float) -> dict[str, Any]:
    """Count, throughput over `seconds`, latency percentiles (ms, all answers, errors
    included: a client waited for them too) and errors by outcome, of one set of records."""
    ms = [r.ms for r in records]
    errors: dict[str, int] = {}
    for r in records:
        if r.outcome != OK:
            errors[r.outcome] = errors.get(r.outcome, 0) + 1
    return {
        "count": len(records),
        "per_s": round(len(records) / seconds, 2) if seconds > 0 else None,
        "p50_ms": round(pct(ms, 50), 1) if ms else None,
        "p95_ms": round(pct(ms, 95), 1) if ms else None,
        "p99_ms": round(pct(ms, 99), 1) if ms else None,
        "max_ms": round(max(ms), 1) if ms else None,
        "errors": dict(sorted(errors.items())),
    }


def summarise(records: Sequence[OpRecord], seconds: float) -> dict[str, Any]:
    """`op_summary` per operation and for all of them together ("all")."""
    ops = sorted({r.op for r in records})
    out = {op: op_summary([r for r in records if r.op == op], seconds) for op in ops}
    out["all"] = op_summary(records, seconds)
    return out


def windows(records: Iterable[OpRecord], width_s: float, seconds: float) -> list[dict[str, Any]]:
    """Throughput, errors and p95 per operation in consecutive windows of `width_s` over
    the first `seconds` of the load (a request counts in the window it started in): whether
    the rate held or sagged as the store grew."""
    if width_s <= 0 or seconds <= 0:
        return []
    n = max(1, int(seconds // width_s + (seconds % width_s > 1e-9)))
    buckets: list[list[OpRecord]] = [[] for _ in range(n)]
    for r in records:
        i = int(r.start_s // width_s)
        if 0 <= i < n:
            buckets[i].append(r)
    out = []
    for i, rs in enumerate(buckets):
        span = min(width_s, seconds - i * width_s)
        ops = sorted({r.op for r in rs})
        out.append(
            {
                "t_s": round(i * width_s, 1),
                "per_s": round(len(rs) / span, 2),
                "errors": sum(1 for r in rs if r.outcome != OK),
                "p95_ms": {op: round(pct([r.ms for r in rs if r.op == op], 95), 1) for op in ops},
            }
        )
    return out


def rss_growth(samples: Sequence[Sample], seconds: float, edge_s: float = 60.0) -> dict[str, Any]:
    """Resident memory of the server's tree over the load: the median of the samples in its
    first `edge_s` against that of its last `edge_s` (medians, so one collection or one
    index build does not decide it), with the peak. `edge_s` shrinks to a fifth of short
    runs."""
    during = [s for s in samples if 0 <= s.t_s <= seconds]
    if not during:
        return {}
    edge = min(edge_s, max(seconds / 5, 1e-9))
    first = median(s.tree_rss_mb for s in during if s.t_s <= edge)
    last = median(s.tree_rss_mb for s in during if s.t_s >= seconds - edge)
    return {
        "edge_s": round(edge, 1),
        "first_mb": round(first, 1),
        "last_mb": round(last, 1),
        "peak_mb": round(max(s.tree_rss_mb for s in during), 1),
        "growth_mb": round(last - first, 1),
        "growth_pct": round(100 * (last - first) / first, 1) if first else None,
    }


def cpu_per_request_ms(samples: Sequence[Sample], seconds: float, requests: int) -> float | None:
    """The server tree's CPU milliseconds per request over the load (the pipeline's work
    after it not counted): what a capacity model divides cores by."""
    during = [s for s in samples if 0 <= s.t_s <= seconds]
    if len(during) < 2 or requests <= 0:
        return None
    return round((during[-1].cpu_s - during[0].cpu_s) * 1000 / requests, 2)


def cpu_split(samples: Sequence[Sample], seconds: float) -> dict[str, float] | None:
    """CPU seconds of the server's tree while under load (the first reading at or after
    the start to the last one at or before `seconds`) and after it, to the last reading
    (the drain): together, all the work the load caused, pipeline included."""
    during = [s for s in samples if 0 <= s.t_s <= seconds]
    after = [s for s in samples if s.t_s > seconds]
    if len(during) < 2:
        return None
    load = during[-1].cpu_s - during[0].cpu_s
    drain = (after[-1].cpu_s - during[-1].cpu_s) if after else 0.0
    return {"load": round(load, 2), "drain": round(drain, 2), "total": round(load + drain, 2)}


def group_drain(groups: Sequence[Mapping[str, Any]], stopped_s: float) -> dict[str, Any]:
    """Per consumer group, from backlog readings ({"t_s": ..., group: entries, ...}): its
    backlog at the first reading after `stopped_s` and the seconds after `stopped_s` until
    it was last seen reaching zero (0: nothing left at the stop; None: still busy at the
    last reading). The group that clears last is the stage the pipeline waits for."""
    after = sorted((g for g in groups if g["t_s"] >= stopped_s), key=lambda g: g["t_s"])
    if not after:
        return {}
    names = sorted({k for g in after for k in g if k != "t_s"})
    out: dict[str, Any] = {}
    for name in names:
        cleared: float | None = 0.0
        for g in after:
            left = int(g.get(name) or 0)
            if left:
                cleared = None
            elif cleared is None:
                cleared = round(g["t_s"] - stopped_s, 2)
        out[name] = {"at_stop": int(after[0].get(name) or 0), "cleared_after_s": cleared}
    return out
