"""`POST /v1/memories/{memory_id}/feedback`: a signal on one memory (`pcm_common.feedback`).
Served by ingest, beside the memory's other routes; the recall's feedback route is the
recall service's."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from pcm_common.feedback.schemas import FeedbackOut, MemoryFeedbackIn
from pcm_common.feedback.service import FeedbackService
from pcm_common.runtime.http import JSON_BODY, KEYED, Tenant, error_responses, state_of

router = APIRouter(prefix="/v1", tags=["memories"], responses=KEYED)


def feedback_of(request: Request) -> FeedbackService:
    return state_of(request, "memory_feedback", FeedbackService)


@router.post(
    "/memories/{memory_id}/feedback",
    response_model=FeedbackOut,
    responses={**JSON_BODY, **error_responses(404)},
)
async def memory_feedback(
    memory_id: str,
    body: MemoryFeedbackIn,
    tenant: Tenant,
    svc: Annotated[FeedbackService, Depends(feedback_of)],
) -> FeedbackOut:
    """`helpful` reinforces the memory and `not_helpful` weakens it: on the cue of
    `recall_id` when given (a memory that recall delivered), else a little for every
    query. `wrong` weakens it and asks for its reconsolidation. The same signal again
    changes nothing."""
    return await svc.on_memory(tenant, memory_id, body)
