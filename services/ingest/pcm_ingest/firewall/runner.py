"""Where a write's CPU work runs (the firewall's screen, what its texts imply): never on
the event loop, and the screen within a deadline.

A request of a few notes takes well under a millisecond to screen: a worker thread runs
it, with no copying. A large one runs in a worker process: in a thread its Python work
would hold this process's interpreter lock, and another tenant's recall on the event loop
would wait its turn (docs/decisions/0039-firewall-worker-processes.md). A screen
that misses the deadline answers 503 `firewall_busy` with Retry-After; nothing is stored.
A large request's derivation (`pcm_ingest.derive`: figures, importance, sparse vector) runs
in the same workers for the same reason.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from pcm_common.firewall import Finding, Screened, ScreenedMetadata, WriteFirewall
from pcm_common.runtime.priority import lower_worker_priority
from pcm_ingest.derive import Derived, derive

Screening = tuple[list[Screened], list[ScreenedMetadata], dict[str, list[str]]]


class FirewallBusy(Exception):
    """The screen did not finish within the deadline: the write is refused, nothing is
    stored, and the client may retry."""


def _warm() -> None:
    """At a worker's start: its priority lowered (`runtime.priority`); its first screen
    (libphonenumber's region data) and derivation (the stemmer) done."""
    lower_worker_priority()
    text = "warm up: (415) 555-2671, 020 7946 0958, ann@example.org, 12 km on Monday"
    WriteFirewall().screen(text)
    derive([0], [text], [True])


def _ready() -> None:
    """A no-op: submitting one makes the pool start a worker."""


def _one_of_each(findings: list[Finding]) -> list[Finding]:
    return list({f.kind: f for f in reversed(findings)}.values())[::-1]


def _screen_in_worker(
    firewall: WriteFirewall, texts: list[str], metadatas: list[dict[str, Any]], names: list[str]
) -> Screening:
    """`screen_request` with one finding of each kind sent back: the service needs the
    kinds, and unpickling 12,500 findings (a text of e-mail addresses) held the server's
    interpreter lock as long as the screen itself."""
    screened, metas, bad = firewall.screen_request(texts, metadatas, names)
    for s in [*screened, *metas]:
        s.blocked, s.redacted = _one_of_each(s.blocked), _one_of_each(s.redacted)
    return screened, metas, bad


def _size(texts: list[str], metadatas: list[dict[str, Any]]) -> int:
    # Metadata is at most 16 kB of JSON a write (schemas.MAX_METADATA_BYTES).
    return sum(map(len, texts)) + 1_000 * len(metadatas)


class ScreenRunner:
    def __init__(
        self,
        firewall: WriteFirewall,
        *,
        process_chars: int,
        workers: int,
        deadline_s: float,
    ) -> None:
        self.firewall = firewall
        self.process_chars = process_chars
        self.workers = workers
        self.deadline_s = deadline_s
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start the worker processes (from a fork server that has imported only the
        firewall and the derivation: forking this process, with its threads and models,
        would not be safe)."""
        if self.workers <= 0 or self.process_chars <= 0 or self._pool is not None:
            return
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["pcm_common.firewall", "pcm_ingest.derive"])
        workers = min(self.workers, os.cpu_count() or 1)  # more would only queue for a core
        self._pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_warm)
        for _ in range(workers):  # started now, not by the first large write
            self._pool.submit(_ready)

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    async def screen_request(
        self, texts: list[str], metadatas: list[dict[str, Any]], names: list[str]
    ) -> Screening:
        """`WriteFirewall.screen_request`, in a thread or a worker process by size; raises
        `FirewallBusy` past the deadline."""
        large = self._pool is not None and _size(texts, metadatas) >= self.process_chars
        loop = asyncio.get_running_loop()
        if large:
            work = loop.run_in_executor(
                self._pool, _screen_in_worker, self.firewall, texts, metadatas, names
            )
        else:
            work = loop.run_in_executor(None, self.firewall.screen_request, texts, metadatas, names)
        try:
            return await asyncio.wait_for(work, self.deadline_s)
        except TimeoutError:
            raise FirewallBusy from None

    async def derive(self, fresh: list[int], texts: list[str], infer: list[bool]) -> Derived:
        """`pcm_ingest.derive.derive`, in a worker process for much text, else here (a
        hop costs more than the work of a few notes)."""
        if self._pool is None or sum(map(len, texts)) < self.process_chars:
            return derive(fresh, texts, infer)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, derive, fresh, texts, infer)
