"""Each API operation as a `Call`: the request to send and how to read its answer. Built
here once, sent by the sync client and the async one alike, so the two cannot differ.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from pcm_client.models import (
    BatchIn,
    BatchOut,
    CaptureMode,
    ErasureOut,
    FeedbackOut,
    Importance,
    ImportOut,
    JobIn,
    JobResult,
    JobRunsOut,
    KeyIn,
    Memory,
    MemoryFeedbackIn,
    MemoryHistory,
    MemoryIn,
    MemoryPage,
    MemoryPatch,
    PolicyIn,
    Precision,
    Readiness,
    RecallFeedbackIn,
    RecallIn,
    RecallMode,
    RecallOut,
    ReembedIn,
    ReembedOut,
    Role,
    RotateIn,
    Scope,
    Source,
    State,
    StoreResult,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Json = dict[str, Any]
LIST_MAX = 500  # the server's largest page


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    read: Callable[[httpx.Response], T]
    json: Any = None
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    # Safe to send again after it may have reached the server (`pcm_client.retry`).
    replayable: bool = True
    # Statuses answered with a body `read` understands, not raised (`/readyz`'s 503).
    accepted: frozenset[int] = frozenset()
    # A body sent as is (JSON Lines), instead of `json`.
    content: bytes | None = None


# ---- the keyword arguments of the client methods (one definition for both clients) ----


class MemoryFields(TypedDict, total=False):
    user_id: str | None
    scope: Scope | None
    workspace: str | None
    project: str | None
    created_at: datetime | None
    importance: Importance | None
    pinned: bool | None
    source: Source | None
    episode: str | None
    metadata: dict[str, Any] | None


class RecallFields(TypedDict, total=False):
    user_id: str | None
    workspace: str | None
    project: str | None
    k: int | None
    compact: bool | None
    now: datetime | None
    include_archived: bool | None
    include_superseded: bool | None
    created_before: datetime | None
    precision: Precision | None
    mode: RecallMode | None
    explain: bool | None


class PatchFields(TypedDict, total=False):
    text: str | None
    importance: Importance | None
    pinned: bool | None
    state: State | None
    metadata: dict[str, Any] | None


class StatsFilters(TypedDict, total=False):
    scope: Scope | None
    workspace: str | None
    project: str | None
    user_id: str | None


class ListFilters(StatsFilters, total=False):
    state: State | None
    pinned: bool | None


class PolicyFields(TypedDict, total=False):
    workspace: str | None
    project: str | None
    capture_mode: CaptureMode | None
    retention_days: int | None
    max_memories: int | None


# ---- reading answers ---------------------------------------------------------------------


def model(cls: type[M]) -> Callable[[httpx.Response], M]:
    return lambda r: cls.model_validate_json(r.content)


def json_object(r: httpx.Response) -> Json:
    out: Json = r.json()
    return out


def nothing(_: httpx.Response) -> None:
    return None


def _id(memory_id: str) -> str:
    return quote(memory_id, safe="")


def _query(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters: the given ones, booleans as the API spells them."""
    return {
        k: (str(v).lower() if isinstance(v, bool) else v)
        for k, v in fields.items()
        if v is not None
    }


# ---- the operations ----------------------------------------------------------------------


def store(memory: MemoryIn, idempotency_key: str | None) -> Call[StoreResult]:
    key = idempotency_key or uuid.uuid4().hex
    return Call(
        "POST",
        "/v1/memories",
        model(StoreResult),
        json=memory.body(),
        headers={"Idempotency-Key": key},
    )


def store_batch(
    memories: Iterable[MemoryIn | Mapping[str, Any]], idempotency_key: str | None
) -> Call[BatchOut]:
    body = BatchIn(memories=[MemoryIn.model_validate(m) for m in memories])
    key = idempotency_key or uuid.uuid4().hex
    return Call(
        "POST",
        "/v1/memories:batch",
        model(BatchOut),
        json=body.body(),
        headers={"Idempotency-Key": key},
    )


def recall(body: RecallIn) -> Call[RecallOut]:
    # A read (its reinforcement happens once per answered recall, in the sweeper).
    return Call("POST", "/v1/recall", model(RecallOut), json=body.body())


def recall_feedback(recall_id: str, body: RecallFeedbackIn) -> Call[FeedbackOut]:
    # Feedback sets signals, so the same body sent twice changes nothing the second time.
    return Call(
        "POST", f"/v1/recall/{_id(recall_id)}/feedback", model(FeedbackOut), json=body.body()
    )


def memory_feedback(memory_id: str, body: MemoryFeedbackIn) -> Call[FeedbackOut]:
    return Call(
        "POST", f"/v1/memories/{_id(memory_id)}/feedback", model(FeedbackOut), json=body.body()
    )


def get(memory_id: str) -> Call[Memory]:
    return Call("GET", f"/v1/memories/{_id(memory_id)}", model(Memory))


def history(memory_id: str) -> Call[MemoryHistory]:
    return Call("GET", f"/v1/memories/{_id(memory_id)}/history", model(MemoryHistory))


def update(memory_id: str, patch: MemoryPatch) -> Call[Memory]:
    # Sending the same patch twice leaves the same memory.
    return Call("PATCH", f"/v1/memories/{_id(memory_id)}", model(Memory), json=patch.body())


def delete(memory_id: str) -> Call[None]:
    # Not replayed after it may have arrived: the second try would answer 404.
    return Call("DELETE", f"/v1/memories/{_id(memory_id)}", nothing, replayable=False)


def list_memories(filters: ListFilters, limit: int, offset: str | None) -> Call[MemoryPage]:
    params = _query({**filters, "limit": limit, "offset": offset})
    return Call("GET", "/v1/memories", model(MemoryPage), params=params)


def stats(filters: StatsFilters) -> Call[Json]:
    return Call("GET", "/v1/stats", json_object, params=_query(filters))


def policies(scope: Scope | None, workspace: str | None, project: str | None) -> Call[Json]:
    params = _query({"scope": scope, "workspace": workspace, "project": project})
    return Call("GET", "/v1/governance", json_object, params=params)


def set_policy(policy: PolicyIn) -> Call[Json]:
    return Call("PUT", "/v1/governance", json_object, json=policy.body())


def clear_policy(scope: Scope, workspace: str | None, project: str | None) -> Call[None]:
    params = _query({"scope": scope, "workspace": workspace, "project": project})
    return Call("DELETE", "/v1/governance", nothing, params=params, replayable=False)


def jobs() -> Call[Json]:
    return Call("GET", "/v1/jobs", json_object)


def run_job(name: str, body: JobIn) -> Call[JobResult]:
    # A job run is not replayed after it may have started (a second one would run again).
    return Call(
        "POST", f"/v1/jobs/{_id(name)}", model(JobResult), json=body.body(), replayable=False
    )


def job_runs(job: str | None, limit: int | None) -> Call[JobRunsOut]:
    return Call(
        "GET", "/v1/jobs/runs", model(JobRunsOut), params=_query({"job": job, "limit": limit})
    )


def pipeline() -> Call[Json]:
    return Call("GET", "/v1/pipeline", json_object)


def ready() -> Call[Readiness]:
    # 503 with the same body: a store is down. Answered, not raised, and not retried.
    return Call("GET", "/readyz", model(Readiness), accepted=frozenset({503}))


def list_keys() -> Call[Json]:
    return Call("GET", "/v1/admin/keys", json_object)


def create_key(role: Role | None, expires_in_s: int | None) -> Call[Json]:
    body = KeyIn(role=role, expires_in_s=expires_in_s)
    return Call("POST", "/v1/admin/keys", json_object, json=body.body(), replayable=False)


def rotate_key(key_id: str, overlap_s: int | None, expires_in_s: int | None) -> Call[Json]:
    body = RotateIn(overlap_s=overlap_s, expires_in_s=expires_in_s)
    return Call(
        "POST",
        f"/v1/admin/keys/{_id(key_id)}:rotate",
        json_object,
        json=body.body(),
        replayable=False,
    )


def revoke_key(key_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/admin/keys/{_id(key_id)}", nothing, replayable=False)


# ---- export, import, erasure --------------------------------------------------------------

NDJSON = "application/x-ndjson"
IMPORT_PART = 500  # memories a request of `import_lines` (the server takes up to 1,000)
IMPORT_PART_BYTES = 4 << 20  # and at most this much of them (the server takes 8 MiB)


def export_params(filters: ListFilters, vectors: bool) -> dict[str, Any]:
    return _query({**filters, "vectors": vectors})


def import_part(body: bytes) -> Call[ImportOut]:
    # Safe to send again: memories already stored are left as they are.
    return Call(
        "POST", "/v1/import", model(ImportOut), content=body, headers={"content-type": NDJSON}
    )


def import_parts(
    lines: Iterable[str | Mapping[str, Any]], size: int = IMPORT_PART
) -> Iterable[tuple[bytes, int, int]]:
    """An export's lines (text or parsed) as request bodies of at most `size` memories
    (the header line, when the export starts with one, opens each): (body, offset,
    memories), where a refusal's `line` plus `offset` is its line in the export."""
    header: bytes | None = None
    part: list[bytes] = []
    first = n = 0  # n: the export's lines read, blank ones not counted (as the server)
    for line in lines:
        raw = (line if isinstance(line, str) else json.dumps(line)).strip().encode()
        if not raw:
            continue
        n += 1
        if n == 1 and raw.startswith(b"{") and b'"header"' in raw:
            header = raw
            continue
        if not part:
            first = n - 1
        part.append(raw)
        if len(part) >= size or sum(map(len, part)) >= IMPORT_PART_BYTES:
            yield _body(header, part), first - (header is not None), len(part)
            part = []
    if part:
        yield _body(header, part), first - (header is not None), len(part)


def _body(header: bytes | None, part: list[bytes]) -> bytes:
    return b"\n".join([header, *part] if header else part) + b"\n"


def reembed(model_name: str) -> Call[ReembedOut]:
    # Sent again it answers 409 while the job runs (or continues one that stopped).
    body = ReembedIn(model=model_name).body()
    return Call("POST", "/v1/admin/reembed", model(ReembedOut), json=body, replayable=False)


def reembed_status() -> Call[ReembedOut]:
    return Call("GET", "/v1/admin/reembed", model(ReembedOut))


def erase(user_id: str | None, workspace: str | None, project: str | None) -> Call[ErasureOut]:
    # Sent again, an erasure resumes where it stopped.
    params = _query({"user_id": user_id, "workspace": workspace, "project": project})
    return Call("DELETE", "/v1/memories", model(ErasureOut), params=params)
