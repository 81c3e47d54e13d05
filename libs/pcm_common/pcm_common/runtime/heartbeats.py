"""Heartbeats of a process's long-running loops (stream consumers, the scheduler, the
outbox), read by /healthz: a loop that has not been through an iteration for longer than
`PCM_STALL_AFTER_S` is stalled, and the process is not healthy even though it still
answers HTTP (a handler hung on a dead socket, a job that never returns, a loop that died).

Idle waits count as iterations: a loop that sleeps longer than the bound (the scheduler's
minute, the claimer's second) sleeps in slices and beats between them (`idle`).
"""

from __future__ import annotations

import asyncio
import time


class Heartbeats:
    """One per process (`Resources.heartbeats`): loop name -> monotonic time of its beat."""

    def __init__(self, stall_after_s: float) -> None:
        self.stall_after_s = stall_after_s
        self._last: dict[str, float] = {}

    def beat(self, name: str) -> None:
        self._last[name] = time.monotonic()

    def forget(self, name: str) -> None:
        """A loop stopped on purpose is no longer watched."""
        self._last.pop(name, None)

    def stalled(self) -> dict[str, float]:
        """Each loop silent for longer than the bound, with how long it has been silent (s)."""
        now = time.monotonic()
        return {
            name: round(now - at, 1)
            for name, at in sorted(self._last.items())
            if now - at > self.stall_after_s
        }

    def watched(self) -> list[str]:
        return sorted(self._last)

    async def idle(self, name: str, seconds: float) -> None:
        """Sleep `seconds`, beating at least four times per bound meanwhile."""
        step = max(0.05, self.stall_after_s / 4)
        deadline = time.monotonic() + seconds
        while True:
            self.beat(name)
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, step))
