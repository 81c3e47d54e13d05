"""`GET /v1/export` and `POST /v1/import`: a tenant's memories out as JSON Lines and back
in (`pcm_common.data.export_format`, `pcm_ingest.importer`). Export is a read (a data key's);
import writes in bulk (an admin key's, `pcm_common.access.auth.required_role`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from pcm_common.data.export_format import ExportHeader, export_line
from pcm_common.domain.memory import Scope, Source, State
from pcm_common.runtime.http import KEYED, ApiError, Tenant, error_responses, refuse_future
from pcm_common.runtime.resources import Resources
from pcm_common.stores.vectors import Filter
from pcm_ingest.api import Svc, _firewalled, _matching
from pcm_ingest.importer import BadImport, Importer, ImportOut, parse

router = APIRouter(prefix="/v1", tags=["export"], responses=KEYED)
NDJSON = "application/x-ndjson"
_PAGE = 256
Name = Annotated[str | None, Query(max_length=200)]


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {NDJSON: {"schema": {"type": "string"}}},
            "description": "A header line, then one line per memory (docs/api.md)",
        }
    },
)
async def export_memories(
    request: Request,
    tenant: Tenant,
    svc: Svc,
    scope: Scope | None = None,
    workspace: Name = None,
    project: Name = None,
    state: State | None = None,
    pinned: bool | None = None,
    user_id: Name = None,
    vectors: bool = False,
) -> StreamingResponse:
    """The tenant's memories (those matching the filters, as `GET /v1/memories` takes
    them) as JSON Lines: text, every payload field, history and versions, and with
    `vectors=true` the dense vectors. The header line counts them (for a progress bar)."""
    must = _matching(
        scope=scope,
        workspace=workspace,
        project=project,
        state=state,
        pinned=pinned,
        user_id=user_id,
    )
    flt = Filter(must=must, must_not={"source": Source.CONSOLIDATION.value})
    res = resources_of(request)
    header = ExportHeader(
        embedding_model=await res.vectors.embedding_model() or res.settings.embedding_model,
        dim=res.settings.embedding_dim,
        vectors=vectors,
        count=await res.vectors.count(tenant, flt),
        filters=must,
    )

    async def lines() -> AsyncIterator[str]:
        yield header.model_dump_json() + "\n"
        async for page in res.vectors.pages(tenant, flt=flt, with_vectors=vectors, size=_PAGE):
            yield "".join(export_line(p, vectors) + "\n" for p in page)

    return StreamingResponse(lines(), media_type=NDJSON)


_IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "JSON Lines as `GET /v1/export` gives them: an optional header "
        "line, then one memory a line",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    }
}


@router.post(
    "/import",
    response_model=ImportOut,
    openapi_extra=_IMPORT_BODY,
    responses=error_responses(400, 403, 413, 422, 503),
)
async def import_memories(request: Request, tenant: Tenant, svc: Svc) -> ImportOut:
    """Store the memories of an export into this tenant, ids kept: one already here is
    left as it is (an import run twice stores nothing new), one the scope's governance
    or the firewall refuses is listed in `refused`. At most `max_batch` memories a
    request; `pcm import` sends a file in such parts."""
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_json", "the body is not UTF-8 JSON Lines") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ApiError(422, "invalid_import", "no lines")
    limit = svc.settings.max_batch
    if len(lines) > limit + 1:  # (+1: the header)
        raise ApiError(413, "batch_too_large", f"at most {limit} memories a request")
    try:
        header, items = parse(tenant, lines)
    except BadImport as exc:
        raise ApiError(422, "invalid_import", str(exc)) from None
    too_long = [i.line for i in items if len(i.record.text) > svc.settings.max_text_chars]
    if too_long:
        raise ApiError(413, "text_too_large", f"line {too_long[0]}: text over the limit")
    for item in items:  # (as a write's: 422 invalid_request)
        refuse_future(item.record.created_at, svc.settings.max_future_s, f"line {item.line}")
    with _firewalled():
        return await Importer(svc, resources_of(request)).run(tenant, header, items)


def resources_of(request: Request) -> Resources:
    """The process's resources, which the ingest component keeps on the app (the write
    service itself holds only the ports it uses)."""
    res: Resources = request.app.state.ingest_resources
    return res
