from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Depends, Request

from pcm_common.feedback.schemas import FeedbackOut, RecallFeedbackIn
from pcm_common.runtime.foreground import FOREGROUND
from pcm_common.runtime.http import (
    JSON_BODY,
    KEYED,
    Tenant,
    error_responses,
    refuse_future,
    state_of,
)
from pcm_recall.schemas import RecallIn, RecallOut
from pcm_recall.service import RecallService

router = APIRouter(prefix="/v1", tags=["recall"], responses=KEYED)


def service_of(request: Request) -> RecallService:
    return state_of(request, "recall", RecallService)


@router.post("/recall", response_model=RecallOut, responses=JSON_BODY)
async def recall(
    body: RecallIn,
    tenant: Tenant,
    svc: Annotated[RecallService, Depends(service_of)],
    background: BackgroundTasks,
) -> RecallOut:
    refuse_future(body.now, svc.settings.max_future_s, "now")
    with FOREGROUND.request():  # background work of this process waits meanwhile
        out, event = await svc.recall(tenant, body)
    if event is not None:
        # Published after the response is sent: reinforcement never adds to recall latency.
        background.add_task(svc.publish, event)
    return out


@router.post(
    "/recall/{recall_id}/feedback",
    response_model=FeedbackOut,
    responses={**JSON_BODY, **error_responses(404)},
)
async def recall_feedback(
    recall_id: str,
    body: RecallFeedbackIn,
    tenant: Tenant,
    svc: Annotated[RecallService, Depends(service_of)],
) -> FeedbackOut:
    """Signals on what a recall delivered (`helpful`, `not_helpful`) and on what it should
    have (`missed`): later recalls near its query rank them up or down (bounded); helpful
    ones are reinforced. The same feedback again changes nothing."""
    return await svc.feedback.on_recall(tenant, recall_id, body)
