"""`PcmClient`: PCM's HTTP API as blocking calls over one pooled httpx connection.

with PcmClient() as pcm:                      # PCM_URL, PCM_API_KEY
    pcm.store("Deploys go out on Tuesdays.", project="shop")
    print(pcm.recall("when do we deploy?", project="shop").prompt)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar, Unpack

import httpx

from pcm_client import calls
from pcm_client.base import DEFAULT_TIMEOUT_S, ClientBase
from pcm_client.calls import (
    Call,
    ListFilters,
    MemoryFields,
    PatchFields,
    PolicyFields,
    RecallFields,
    StatsFilters,
)
from pcm_client.errors import ApiError, PcmError, error_of
from pcm_client.models import (
    BatchOut,
    ErasureOut,
    FeedbackOut,
    ImportOut,
    JobIn,
    JobResult,
    JobRunsOut,
    Memory,
    MemoryFeedbackIn,
    MemoryHistory,
    MemoryIn,
    MemoryPage,
    MemoryPatch,
    PolicyIn,
    Readiness,
    RecallFeedbackIn,
    RecallIn,
    RecallOut,
    ReembedOut,
    Role,
    Scope,
    Signal,
    StoreResult,
)
from pcm_client.retry import Retry, transport_error

T = TypeVar("T")


class PcmClient(ClientBase):
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: Retry | None = None,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, api_key, timeout=timeout, retry=retry, headers=headers)
        self._http = httpx.Client(
            base_url=self.url, headers=self.headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PcmClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def send(self, call: Call[T], timeout_s: float | None = None) -> T:
        """Send `call`, retried as `self.retry` allows; its result, or its error raised."""
        tried = 0
        while True:
            tried += 1
            try:
                return self._answer(call, self._http.request(**self._request(call, timeout_s)))
            except httpx.HTTPError as exc:
                error: PcmError = transport_error(exc, self.url, self._limit(timeout_s))
            except ApiError as exc:
                error = exc
            wait = self.retry.wait_after(tried, error, call.replayable)
            if wait is None:
                raise error from error.__cause__
            time.sleep(wait)

    # ---- export, import, erasure -------------------------------------------------------

    def export(
        self,
        *,
        vectors: bool = False,
        timeout_s: float | None = None,
        **filters: Unpack[ListFilters],
    ) -> Iterator[dict[str, Any]]:
        """The tenant's memories (those matching `filters`) as the lines of an export,
        parsed: the header first (its `count`: the memories that follow), then one per
        memory; with `vectors`, their dense vectors too. Streamed as the server sends it;
        not retried once it started (call it again)."""
        params = calls.export_params(filters, vectors)
        limit = self._limit(timeout_s)
        try:
            with self._http.stream("GET", "/v1/export", params=params, timeout=limit) as r:
                if r.status_code >= 400:
                    r.read()
                    raise error_of(r)
                for line in r.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.HTTPError as exc:
            raise transport_error(exc, self.url, limit) from exc

    def import_lines(
        self,
        lines: Iterable[str | Mapping[str, Any]],
        *,
        part: int = calls.IMPORT_PART,
        timeout_s: float | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportOut:
        """Import an export's lines (text or parsed, as `export` gives them), `part`
        memories a request; `progress` is called with the memories each request sent.
        Memories the tenant holds already are left as they are, so importing a file again
        (or after an interrupted import) stores only what is missing."""
        total = ImportOut.empty()
        for body, offset, sent in calls.import_parts(lines, part):
            total.add(self.send(calls.import_part(body), timeout_s), offset)
            if progress is not None:
                progress(sent)
        return total

    def reembed(self, model: str, *, timeout_s: float | None = None) -> ReembedOut:
        """Start moving the store to embedding model `model` (or continue a stopped job
        for it); `reembed_status` follows it. An operator key's (`OperatorOnly` for
        any other); `ReembedRunning` while a job runs, `ValidationError` (unknown_model)
        for a model it cannot move to."""
        return self.send(calls.reembed(model), timeout_s)

    def reembed_status(self, *, timeout_s: float | None = None) -> ReembedOut:
        """The last re-embedding job and the store's model now (an operator key's)."""
        return self.send(calls.reembed_status(), timeout_s)

    def erase(
        self,
        *,
        user_id: str | None = None,
        workspace: str | None = None,
        project: str | None = None,
        timeout_s: float | None = 600.0,
    ) -> ErasureOut:
        """Erase everything of a user, workspace or project (those given together: what
        has all of them), with what was derived from it; counts back. An admin key's. A
        retry, or a second call, finishes an erasure that stopped."""
        return self.send(calls.erase(user_id, workspace, project), timeout_s)

    # ---- memories ----------------------------------------------------------------------

    def store(
        self,
        text: str,
        *,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
        **fields: Unpack[MemoryFields],
    ) -> StoreResult:
        """Store a memory: `{id, status}` (created, reinforced, merged, redacted, or
        skipped for a capture the scope declines). Sent with an `Idempotency-Key` (a new
        one unless given), so a retried write is stored once."""
        memory = MemoryIn(text=text, **fields)
        return self.send(calls.store(memory, idempotency_key), timeout_s)

    def store_batch(
        self,
        memories: Iterable[MemoryIn | Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
    ) -> BatchOut:
        """Store up to the server's batch limit (1,000) at once: one result per memory."""
        return self.send(calls.store_batch(memories, idempotency_key), timeout_s)

    def recall(
        self, query: str, *, timeout_s: float | None = None, **fields: Unpack[RecallFields]
    ) -> RecallOut:
        """What PCM knows for `query`: the slots and the rendered `prompt`."""
        return self.send(calls.recall(RecallIn(query=query, **fields)), timeout_s)

    def recall_feedback(
        self,
        recall_id: str,
        *,
        helpful: Iterable[str] = (),
        not_helpful: Iterable[str] = (),
        missed: Iterable[str] = (),
    ) -> FeedbackOut:
        """Signals on what recall `recall_id` (`RecallOut.recall_id`) delivered, and on what
        it missed: later recalls near its query rank them up or down. Setting the same
        signals again changes nothing."""
        body = RecallFeedbackIn(
            helpful=list(helpful) or None,
            not_helpful=list(not_helpful) or None,
            missed=list(missed) or None,
        )
        return self.send(calls.recall_feedback(recall_id, body))

    def memory_feedback(
        self, memory_id: str, signal: Signal, *, recall_id: str | None = None
    ) -> FeedbackOut:
        """A signal on one memory (on recall `recall_id`'s query when given); `wrong` also
        asks for its reconsolidation."""
        body = MemoryFeedbackIn(signal=signal, recall_id=recall_id)
        return self.send(calls.memory_feedback(memory_id, body))

    def get(self, memory_id: str) -> Memory:
        return self.send(calls.get(memory_id))

    def history(self, memory_id: str) -> MemoryHistory:
        return self.send(calls.history(memory_id))

    def update(self, memory_id: str, **fields: Unpack[PatchFields]) -> Memory:
        """Change a memory's text, importance, pin, state or metadata."""
        return self.send(calls.update(memory_id, MemoryPatch(**fields)))

    def pin(self, memory_id: str, pinned: bool = True) -> Memory:
        return self.update(memory_id, pinned=pinned)

    def delete(self, memory_id: str) -> None:
        self.send(calls.delete(memory_id))

    def list_memories(
        self, *, limit: int = 50, offset: str | None = None, **filters: Unpack[ListFilters]
    ) -> MemoryPage:
        """One page of memories; pass its `next_offset` back as `offset` for the next."""
        return self.send(calls.list_memories(filters, limit, offset))

    def iter_memories(
        self, *, page_size: int = calls.LIST_MAX, **filters: Unpack[ListFilters]
    ) -> Iterator[dict[str, Any]]:
        """Every memory matching `filters`, page by page."""
        offset: str | None = None
        while True:
            page = self.list_memories(limit=page_size, offset=offset, **filters)
            yield from page.items
            if not page.next_offset:
                return
            offset = page.next_offset

    def stats(self, **filters: Unpack[StatsFilters]) -> dict[str, Any]:
        """Exact counts of memories by state, pinned, and episode records."""
        return self.send(calls.stats(filters))

    # ---- governance --------------------------------------------------------------------

    def policies(
        self, scope: Scope | None = None, workspace: str | None = None, project: str | None = None
    ) -> dict[str, Any]:
        """`{policies: [...]}`, and with `scope` the policy in force there (`effective`)."""
        return self.send(calls.policies(scope, workspace, project))

    def set_policy(self, scope: Scope = "global", **fields: Unpack[PolicyFields]) -> dict[str, Any]:
        """Replace one scope's policy (fields left out inherit from the wider scope)."""
        return self.send(calls.set_policy(PolicyIn(scope=scope, **fields)))

    def clear_policy(
        self, scope: Scope = "global", workspace: str | None = None, project: str | None = None
    ) -> None:
        self.send(calls.clear_policy(scope, workspace, project))

    # ---- jobs, state, keys -------------------------------------------------------------

    def jobs(self) -> dict[str, Any]:
        return self.send(calls.jobs())

    def run_job(
        self, name: str, now: datetime | None = None, *, timeout_s: float | None = None
    ) -> JobResult:
        """Run a lifecycle job for this key's tenant now (`consolidation` with a data key;
        the others need an admin key)."""
        return self.send(calls.run_job(name, JobIn(now=now)), timeout_s)

    def consolidate(
        self, now: datetime | None = None, *, timeout_s: float | None = None
    ) -> JobResult:
        """Consolidate settled episodes into episode records now (sources are kept)."""
        return self.run_job("consolidation", now, timeout_s=timeout_s)

    def job_runs(self, job: str | None = None, limit: int | None = None) -> JobRunsOut:
        """The last runs of each lifecycle job on this key's tenant (or of `job`), newest
        first, `limit` (1-10, the server's default 5) a job; `NotFound` for an unknown job."""
        return self.send(calls.job_runs(job, limit))

    def pipeline(self) -> dict[str, Any]:
        """`{pending, streams}`: what the background consumers have not processed yet."""
        return self.send(calls.pipeline())

    def ready(self) -> Readiness:
        """`/readyz`: whether the server and each store are ready (a store down is
        answered `ready: false`, not raised)."""
        return self.send(calls.ready())

    def list_keys(self) -> dict[str, Any]:
        return self.send(calls.list_keys())

    def create_key(
        self, role: Role | None = None, expires_in_s: int | None = None
    ) -> dict[str, Any]:
        """A new key for this admin key's tenant; the answer holds it (shown only once)."""
        return self.send(calls.create_key(role, expires_in_s))

    def rotate_key(
        self, key_id: str, overlap_s: int | None = None, expires_in_s: int | None = None
    ) -> dict[str, Any]:
        return self.send(calls.rotate_key(key_id, overlap_s, expires_in_s))

    def revoke_key(self, key_id: str) -> None:
        self.send(calls.revoke_key(key_id))
