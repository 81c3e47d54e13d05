"""`DELETE /v1/memories?user_id=...|workspace=...|project=...`: erase everything of a user
or a scope (`pcm_common.data.erasure`), answered with what was erased. An admin key's: it
deletes in bulk (`pcm_common.access.auth.required_role`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from pcm_common.data.erasure import Erasure, ErasureRunning, Target
from pcm_common.runtime.http import KEYED, ApiError, Tenant, error_responses, resources_of

router = APIRouter(prefix="/v1", tags=["memories"], responses=KEYED)

Name = Annotated[str | None, Query(min_length=1, max_length=200)]


class Erased(BaseModel):
    memories: int
    episode_records: int
    graph_memories: int
    routine_memories: int
    stream_entries: int
    redis_keys: int
    facts: int  # distilled facts with an erased source


class ErasureOut(BaseModel):
    job_id: str
    status: str  # done
    resumed: bool  # this call finished a run that had stopped
    erased: Erased


@router.delete("/memories", response_model=ErasureOut, responses=error_responses(403, 409))
async def erase_memories(
    request: Request,
    tenant: Tenant,
    user_id: Name = None,
    workspace: Name = None,
    project: Name = None,
) -> ErasureOut:
    """Erase every memory of the user (or workspace, or project; given together, those
    that have all of them) with everything derived from it. Call it again with the same
    query to finish an erasure that stopped (a 503, a lost connection)."""
    try:
        target = Target(user_id=user_id, workspace=workspace, project=project)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    try:
        job = await Erasure(resources_of(request)).run(tenant, target)
    except ErasureRunning:
        raise ApiError(
            409, "erasure_running", "this erasure is running; call again when it ends"
        ) from None
    return ErasureOut.model_validate(job)
