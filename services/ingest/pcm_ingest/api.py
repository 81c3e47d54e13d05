"""HTTP routes of the write API (DESIGN §4)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from pcm_common.domain.memory import Scope, State
from pcm_common.http import ApiError, Tenant, refuse_future
from pcm_common.stores.vectors import Filter
from pcm_ingest.firewall import SecretDetected
from pcm_ingest.firewall.runner import FirewallBusy
from pcm_ingest.schemas import BatchIn, BatchOut, MemoryIn, MemoryPage, MemoryPatch, StoreResult
from pcm_ingest.service import CaptureRefused, IngestService

router = APIRouter(prefix="/v1", tags=["memories"])


def service_of(request: Request) -> IngestService:
    return request.app.state.ingest


Svc = Annotated[IngestService, Depends(service_of)]


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
    is the server's: 503 with Retry-After, nothing stored."""
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


@router.post("/memories", status_code=201, response_model=StoreResult)
async def store_memory(body: MemoryIn, tenant: Tenant, svc: Svc, response: Response) -> StoreResult:
    _check_items(svc, [body])
    with _firewalled():
        result = (await svc.store(tenant, [body]))[0]
    if result.status == "skipped":
        response.status_code = 200  # nothing was created
    return result


@router.post("/memories:batch", status_code=201, response_model=BatchOut)
async def store_batch(body: BatchIn, tenant: Tenant, svc: Svc) -> BatchOut:
    if len(body.memories) > svc.settings.max_batch:
        raise ApiError(413, "batch_too_large", f"at most {svc.settings.max_batch} memories")
    _check_items(svc, body.memories)
    with _firewalled():
        return BatchOut(results=await svc.store(tenant, body.memories))


@router.get("/memories", response_model=MemoryPage)
async def list_memories(
    tenant: Tenant,
    svc: Svc,
    scope: Scope | None = None,
    workspace: str | None = None,
    project: str | None = None,
    state: State | None = None,
    pinned: bool | None = None,
    user_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: str | None = None,
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
    items, nxt = await svc.list(tenant, Filter(must=must), limit, offset)
    return MemoryPage(items=items, next_offset=nxt)


@router.get("/stats")
async def stats(
    tenant: Tenant,
    svc: Svc,
    scope: Scope | None = None,
    workspace: Annotated[str | None, Query(max_length=200)] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    user_id: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """Exact counts of the tenant's memories (optionally of one scope, workspace, project or
    user): by state, pinned, and the episode records consolidation made (not memories)."""
    where = _matching(scope=scope, workspace=workspace, project=project, user_id=user_id)
    return await svc.stats(tenant, where)


def _matching(**fields: object) -> dict[str, Any]:
    """The query's filters as payload conditions: the ones given, enums by value."""
    return {
        name: value.value if isinstance(value, Scope | State) else value
        for name, value in fields.items()
        if value is not None
    }


@router.get("/memories/{memory_id}")
async def get_memory(memory_id: str, tenant: Tenant, svc: Svc) -> dict[str, Any]:
    found = await svc.get(tenant, _valid_id(memory_id))
    if found is None:
        raise ApiError(404, "memory_not_found", memory_id)
    return found


@router.get("/memories/{memory_id}/history")
async def memory_history(memory_id: str, tenant: Tenant, svc: Svc) -> dict[str, Any]:
    found = await svc.get(tenant, _valid_id(memory_id))
    if found is None:
        raise ApiError(404, "memory_not_found", memory_id)
    versions = [
        *found.get("history", []),
        {"version": found["version"], "text": found["text"], "current": True},
    ]
    return {
        "id": memory_id,
        "versions": versions,
        "supersedes": found.get("supersedes"),
        "superseded_by": found.get("superseded_by"),
    }


@router.patch("/memories/{memory_id}")
async def patch_memory(
    memory_id: str, body: MemoryPatch, tenant: Tenant, svc: Svc
) -> dict[str, Any]:
    if body.text is not None and len(body.text) > svc.settings.max_text_chars:
        raise ApiError(413, "text_too_large", f"text over {svc.settings.max_text_chars} characters")
    with _firewalled():
        updated = await svc.patch(tenant, _valid_id(memory_id), body)
    if updated is None:
        raise ApiError(404, "memory_not_found", memory_id)
    return updated


@router.delete("/memories/{memory_id}", status_code=204)
async def delete_memory(memory_id: str, tenant: Tenant, svc: Svc) -> Response:
    if not await svc.delete(tenant, _valid_id(memory_id)):
        raise ApiError(404, "memory_not_found", memory_id)
    return Response(status_code=204)


def _valid_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        raise ApiError(404, "memory_not_found", "not a memory id") from None
