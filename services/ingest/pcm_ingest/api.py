"""HTTP routes of the write API (DESIGN §4)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from pcm_common.data.listing import Listing
from pcm_common.domain import versions
from pcm_common.domain.memory import Scope, State
from pcm_common.runtime.http import (
    JSON_BODY,
    KEYED,
    ApiError,
    Tenant,
    error_responses,
    refuse_future,
    state_of,
)
from pcm_common.stores.vectors import Filter
from pcm_ingest.firewall import SecretDetected
from pcm_ingest.firewall.runner import FirewallBusy
from pcm_ingest.idempotency import Stored, WritePlan, fingerprint, valid_key
from pcm_ingest.memories import MemoryEdits
from pcm_ingest.schemas import (
    BatchIn,
    BatchOut,
    MemoryHistory,
    MemoryIn,
    MemoryPage,
    MemoryPatch,
    StoreResult,
)
from pcm_ingest.service import CaptureRefused, IngestService
from pcm_ingest.tenant_gates import TenantBusy

router = APIRouter(prefix="/v1", tags=["memories"], responses=KEYED)
# A write: a malformed body, a capture the governance refuses (403), an Idempotency-Key
# whose first request is still running (409).
WRITE = {**JSON_BODY, **error_responses(403, 409)}
NOT_FOUND = error_responses(404)


def service_of(request: Request) -> IngestService:
    return state_of(request, "ingest", IngestService)


def memories_of(request: Request) -> MemoryEdits:
    return state_of(request, "memories", MemoryEdits)


Svc = Annotated[IngestService, Depends(service_of)]
Memories = Annotated[MemoryEdits, Depends(memories_of)]


def _check_items(svc: IngestService, items: list[MemoryIn]) -> None:
    """The settings' limits on each item: text length (413) and how far in the future
    `created_at` may lie (422); a batch with one bad item is refused whole."""
    limit = svc.settings.max_text_chars
    for n, item in enumerate(items):
        if len(item.text) > limit:
            raise ApiError(413, "text_too_large", f"item {n}: text over {limit} characters")
        refuse_future(item.created_at, svc.settings.max_future_s, f"item {n}: created_at")


@contextmanager
def _firewalled() -> Iterator[None]:
    """A blocked secret is the client's error: 422, and nothing was stored; so is an
    explicit store that the scope's capture mode refuses (403). A screen past its deadline
    is the server's: 503 with Retry-After, nothing stored; so is a large write that found
    no turn among its tenant's (429)."""
    try:
        yield
    except SecretDetected as exc:
        raise ApiError(422, "secret_detected", exc.items) from None
    except CaptureRefused as exc:
        raise ApiError(403, "capture_refused", exc.items) from None
    except FirewallBusy:
        raise ApiError(
            503, "firewall_busy", "the write firewall is busy; retry later", {"Retry-After": "5"}
        ) from None
    except TenantBusy:
        raise ApiError(
            429,
            "tenant_busy",
            "this tenant's earlier large writes are still being stored; retry later",
            {"Retry-After": "5"},
        ) from None


IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="a retry with the same key within 24 h gets the first answer, and "
        "nothing is stored twice (docs/configuration.md)",
    ),
]
# An answer to give: status code and JSON body.
Answer = tuple[int, Any]
Write = Callable[[WritePlan | None], Awaitable[Answer]]


async def _answer_once(
    svc: IngestService, tenant: str, key: str, route: str, body: BaseModel, write: Write
) -> JSONResponse:
    """Run `write` once per Idempotency-Key (`pcm_ingest.idempotency`): its answer, a 4xx
    included, is kept for the key's retries; a request that fails without one leaves the
    key for a retry to take over."""
    print_ = fingerprint(route, body.model_dump(mode="json"))
    keys = svc.idempotency
    got = await keys.begin(tenant, valid_key(key), print_)
    if isinstance(got, Stored):
        return JSONResponse(got.body, got.status, headers={"Idempotent-Replayed": "true"})
    try:
        status, out = await write(got)
    except ApiError as exc:
        if exc.status_code >= 500 or exc.status_code == 429:  # a retry may succeed
            await keys.abandon(tenant, key)
        else:
            await keys.finish(tenant, key, print_, exc.status_code, exc.detail)
        raise
    except BaseException:
        await keys.abandon(tenant, key)
        raise
    await keys.finish(tenant, key, print_, status, out)
    return JSONResponse(out, status)


def _stored(results: list[StoreResult], single: bool) -> Answer:
    """201, or 200 for a single write that stored nothing (a skipped capture)."""
    if single:
        return (200 if results[0].status == "skipped" else 201), results[0].model_dump(mode="json")
    return 201, BatchOut(results=results).model_dump(mode="json")


@router.post(
    "/memories",
    status_code=201,
    response_model=StoreResult,
    # 200: a capture the scope skipped (nothing stored).
    responses={200: {"model": StoreResult, "description": "Skipped; nothing stored"}, **WRITE},
)
async def store_memory(
    body: MemoryIn,
    tenant: Tenant,
    svc: Svc,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    async def write(plan: WritePlan | None) -> Answer:
        _check_items(svc, [body])
        with _firewalled():
            return _stored(await svc.store(tenant, [body], plan), single=True)

    if idempotency_key is not None:
        return await _answer_once(svc, tenant, idempotency_key, "memories", body, write)
    response.status_code, out = await write(None)
    return out


@router.post("/memories:batch", status_code=201, response_model=BatchOut, responses=WRITE)
async def store_batch(
    body: BatchIn, tenant: Tenant, svc: Svc, idempotency_key: IdempotencyKey = None
) -> Any:
    async def write(plan: WritePlan | None) -> Answer:
        if len(body.memories) > svc.settings.max_batch:
            raise ApiError(413, "batch_too_large", f"at most {svc.settings.max_batch} memories")
        _check_items(svc, body.memories)
        with _firewalled():
            return _stored(await svc.store(tenant, body.memories, plan), single=False)

    if idempotency_key is not None:
        return await _answer_once(svc, tenant, idempotency_key, "memories:batch", body, write)
    return (await write(None))[1]


@router.get("/memories", response_model=MemoryPage)
async def list_memories(
    tenant: Tenant,
    memories: Memories,
    scope: Scope | None = None,
    workspace: str | None = None,
    project: str | None = None,
    state: State | None = None,
    pinned: bool | None = None,
    user_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: str | None = None,
    count: Annotated[
        bool, Query(description="also count every memory the filters match (`total`)")
    ] = False,
    *,
    more: Listing,
) -> MemoryPage:
    must = _matching(
        scope=scope,
        workspace=workspace,
        project=project,
        state=state,
        pinned=pinned,
        user_id=user_id,
    )
    if offset is not None:
        try:
            offset = str(uuid.UUID(offset))
        except ValueError:
            raise ApiError(
                422, "invalid_request", "offset: the next_offset of an earlier page"
            ) from None
    flt = more.narrow(Filter(must=must))
    if not count:
        items, nxt = await memories.list(tenant, flt, limit, offset)
        return MemoryPage(items=items, next_offset=nxt)
    # The store's exact count under the same filter, beside the page (not from it).
    (items, nxt), total = await asyncio.gather(
        memories.list(tenant, flt, limit, offset), memories.count(tenant, flt)
    )
    return MemoryPage(items=items, next_offset=nxt, total=total)


@router.get("/stats")
async def stats(
    tenant: Tenant,
    memories: Memories,
    scope: Scope | None = None,
    workspace: Annotated[str | None, Query(max_length=200)] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    user_id: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """Exact counts of the tenant's memories (optionally of one scope, workspace, project or
    user): by state, pinned, and the episode records consolidation made (not memories)."""
    where = _matching(scope=scope, workspace=workspace, project=project, user_id=user_id)
    return await memories.stats(tenant, where)


def _matching(**fields: object) -> dict[str, Any]:
    """The query's filters as payload conditions: the ones given, enums by value."""
    return {
        name: value.value if isinstance(value, Scope | State) else value
        for name, value in fields.items()
        if value is not None
    }


@router.get("/memories/{memory_id}", responses=NOT_FOUND)
async def get_memory(memory_id: str, tenant: Tenant, memories: Memories) -> dict[str, Any]:
    found = await memories.get(tenant, _valid_id(memory_id))
    if found is None:
        raise ApiError(404, "memory_not_found", memory_id)
    return found


@router.get("/memories/{memory_id}/history", response_model=MemoryHistory, responses=NOT_FOUND)
async def memory_history(memory_id: str, tenant: Tenant, memories: Memories) -> dict[str, Any]:
    found = await memories.get(tenant, _valid_id(memory_id))
    if found is None:
        raise ApiError(404, "memory_not_found", memory_id)
    return {
        "id": memory_id,
        "versions": versions.listed(found),
        "supersedes": found.get("supersedes"),
        "superseded_by": found.get("superseded_by"),
    }


# (No 403: a PATCH screens for secrets and PII, but the capture mode judges new writes only.)
@router.patch("/memories/{memory_id}", responses={**JSON_BODY, **NOT_FOUND})
async def patch_memory(
    memory_id: str, body: MemoryPatch, tenant: Tenant, svc: Svc, memories: Memories
) -> dict[str, Any]:
    if body.text is not None and len(body.text) > svc.settings.max_text_chars:
        raise ApiError(413, "text_too_large", f"text over {svc.settings.max_text_chars} characters")
    with _firewalled():
        updated = await memories.patch(tenant, _valid_id(memory_id), body)
    if updated is None:
        raise ApiError(404, "memory_not_found", memory_id)
    return updated


@router.delete("/memories/{memory_id}", status_code=204, responses=NOT_FOUND)
async def delete_memory(memory_id: str, tenant: Tenant, memories: Memories) -> Response:
    if not await memories.delete(tenant, _valid_id(memory_id)):
        raise ApiError(404, "memory_not_found", memory_id)
    return Response(status_code=204)


def _valid_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        raise ApiError(404, "memory_not_found", "not a memory id") from None
