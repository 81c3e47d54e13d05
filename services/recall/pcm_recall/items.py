"""The answer's items: a stored record (or the fields of it an item needs) as a
`ContextItem`, with its score, relevance and strength."""

from __future__ import annotations

from pcm_common.domain.memory import ItemView, MemoryRecord, State
from pcm_recall.schemas import ContextItem


def text_of(item: ContextItem) -> str:
    return item.text


def context_item(
    rec: ItemView | MemoryRecord, *, score: float, relevance: float, strength: float
) -> ContextItem:
    return ContextItem(
        memory_id=rec.id,
        text=rec.text,
        created_at=rec.created_at,
        score=round(score, 6),
        relevance=round(relevance, 6),
        strength=round(strength, 6),
        scope=rec.scope.value,
        episode=rec.episode,
        metadata=rec.metadata,
        state=rec.state.value,
        superseded_by=rec.superseded_by if rec.state == State.SUPERSEDED else None,
        seq=rec.seq,
        user_id=rec.user_id,
        workspace=rec.workspace,
        project=rec.project,
    )
