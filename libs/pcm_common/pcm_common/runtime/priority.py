"""CPU priority of the worker processes that do bulk work beside a service (the firewall's
screens of large writes, spaCy parses for the graph and the judge).

On a busy machine the scheduler shares the cores by weight: at equal priority three large
writes' workers left another tenant's recall a third of a core. Lowered by
`PCM_WORKER_NICE` steps (default 10: about a tenth of the weight), a worker still takes
every cycle nobody else wants, and the process answering requests goes first.
"""

from __future__ import annotations

import os

DEFAULT_NICE = 10


def worker_nice() -> int:
    """`PCM_WORKER_NICE` (0: workers run at the service's own priority)."""
    raw = os.environ.get("PCM_WORKER_NICE", "").strip()
    try:
        return max(0, min(19, int(raw))) if raw else DEFAULT_NICE
    except ValueError:
        return DEFAULT_NICE


def lower_worker_priority() -> None:
    """Called first thing in a worker process: lower its priority by `worker_nice()`
    steps. Where the system refuses, the worker runs as it is."""
    steps = worker_nice()
    if steps and hasattr(os, "nice"):
        try:
            os.nice(steps)
        except OSError:
            pass
