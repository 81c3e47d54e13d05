"""Requests in flight in this process, which background work in the same process yields to.

The embedded default runs every service in one process, and the sweeper's recall side
effects (store reads and writes that hold the interpreter lock) ran right next to the next
recall and slowed it (docs/decisions/0050-side-effects-yield.md). Background steps therefore
wait, each at most a bounded time, while a foreground request is being served; a process
that serves no requests (a sweeper on its own) never waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Foreground:
    def __init__(self) -> None:
        self._active = 0
        self._idle: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_end = 0.0  # time.monotonic() when the last request finished

    @property
    def active(self) -> int:
        return self._active

    def _event(self) -> asyncio.Event:
        # One event per running loop: tests and benchmarks start several loops in turn.
        loop = asyncio.get_running_loop()
        if self._idle is None or self._loop is not loop:
            self._idle, self._loop = asyncio.Event(), loop
            if self._active == 0:
                self._idle.set()
        return self._idle

    @contextmanager
    def request(self) -> Iterator[None]:
        """Mark a foreground request as being served for the duration of the block."""
        self._active += 1
        self._event().clear()
        try:
            yield
        finally:
            self._active -= 1
            if self._active == 0:
                self._last_end = time.monotonic()
                self._event().set()

    async def wait_idle(self, max_wait_s: float, quiet_s: float = 0.0) -> bool:
        """Wait until no foreground request is in flight and none ended in the last
        `quiet_s` (a client sending requests back to back leaves gaps of a few ms, and a
        step started in one lands on the next request), at most `max_wait_s` in all (so
        background work is delayed, never starved); returns whether it was quiet."""
        deadline = time.monotonic() + max(0.0, max_wait_s)
        while True:
            now = time.monotonic()
            if self._active == 0:
                left = self._last_end + quiet_s - now
                if left <= 0:
                    return True
                if now >= deadline:
                    return False
                await asyncio.sleep(min(left, deadline - now))
                continue
            if now >= deadline:
                return False
            try:
                await asyncio.wait_for(self._event().wait(), deadline - now)
            except TimeoutError:
                return False


FOREGROUND = Foreground()
