"""`POST /v1/admin/reembed` moves the vector store to another embedding model, and `GET`
tells how far it is (`pcm_common.data.reembed`). An operator key's only (PCM_OPERATOR_KEYS,
or the dev key): it rewrites every tenant's vectors and changes the model every tenant's
recall uses, so a tenant's admin key gets 403 `operator_only`
(`pcm_common.access.auth.OPERATOR_ROUTES`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from pcm_common.data.reembed import Reembedding, ReembedRunning, UnknownModel
from pcm_common.runtime.http import JSON_BODY, KEYED, ApiError, Tenant, error_responses, state_of

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses={**KEYED, **error_responses(403)})


class ReembedIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str = Field(min_length=1, max_length=200)


class ReembedOut(BaseModel):
    job_id: str | None
    status: str  # none | running | switching | done
    model: str | None
    from_model: str | None
    store_model: str
    done: int
    total: int
    fraction: float
    resumed: int
    started_at: float | None
    finished_at: float | None
    error: str | None


def _job(request: Request) -> Reembedding:
    return state_of(request, "reembed", Reembedding)


@router.post(
    "/reembed",
    status_code=202,
    response_model=ReembedOut,
    responses={**JSON_BODY, **error_responses(409)},
)
async def start_reembed(body: ReembedIn, request: Request, _: Tenant) -> ReembedOut:
    """Start moving the store's vectors to `model` (or continue a job for it that
    stopped); recall keeps answering, and switches to the new vectors when they are
    complete. `GET` follows it. An operator key's (PCM_OPERATOR_KEYS): any other gets 403
    `operator_only`."""
    if getattr(request.app.state, "recall", None) is None:
        # Dual writes and the query model's switch are this process's own.
        raise ApiError(
            409,
            "reembed_needs_one_process",
            "re-embedding runs in the all-in-one server (ingest and recall in one process)",
        )
    try:
        started = await _job(request).start(body.model)
    except UnknownModel as exc:
        raise ApiError(422, "unknown_model", str(exc)) from None
    except ReembedRunning:
        raise ApiError(
            409, "reembed_running", "a re-embedding job is running; GET shows its progress"
        ) from None
    return ReembedOut.model_validate(started)


@router.get("/reembed", response_model=ReembedOut)
async def reembed_status(request: Request, _: Tenant) -> ReembedOut:
    """The last re-embedding job (status `none`: there was none) and the store's model
    (an operator key's, as `POST`)."""
    return ReembedOut.model_validate(await _job(request).status())
