"""Per-stage wall time of one recall (`timings_ms`, `pcm_recall_stage_seconds`)."""

from __future__ import annotations

import time

from pcm_common.runtime.telemetry import RECALL_STAGE_SECONDS


class Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        t = time.perf_counter()
        self.ms[stage] = round((t - self._t) * 1000, 3)
        RECALL_STAGE_SECONDS.labels(stage).observe(t - self._t)
        self._t = t
