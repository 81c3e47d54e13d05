"""The feedback routes' bodies and answer (`POST /v1/recall/{recall_id}/feedback`,
`POST /v1/memories/{id}/feedback`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pcm_common.domain.feedback import MemorySignal

MAX_IDS = 200  # a recall delivers at most max_k (200) memories

MemoryId = Annotated[str, Field(min_length=1, max_length=100)]


class RecallFeedbackIn(BaseModel):
    """Signals on what one recall delivered: `helpful` and `not_helpful` name delivered
    memories, `missed` memories it should have delivered. At least one id."""

    model_config = ConfigDict(extra="forbid")

    helpful: list[MemoryId] = Field(default_factory=list, max_length=MAX_IDS)
    not_helpful: list[MemoryId] = Field(default_factory=list, max_length=MAX_IDS)
    missed: list[MemoryId] = Field(default_factory=list, max_length=MAX_IDS)

    @model_validator(mode="after")
    def _some(self) -> RecallFeedbackIn:
        if not (self.helpful or self.not_helpful or self.missed):
            raise ValueError("name at least one memory in helpful, not_helpful or missed")
        return self


class MemoryFeedbackIn(BaseModel):
    """A signal on one memory; with `recall_id`, on that recall's cue (the memory must be
    one it delivered), else on the memory for every query (a smaller term)."""

    model_config = ConfigDict(extra="forbid")

    signal: MemorySignal
    recall_id: str | None = Field(default=None, min_length=1, max_length=100)


class FeedbackOut(BaseModel):
    """What the feedback changed: `changed`, the signals newly set (memory id -> signal);
    `unchanged`, ids whose signal was already that (idempotence); `reinforced`, memories
    sent to be reinforced as if recalled again; `reconsolidation`, memories marked wrong
    whose rewrite was requested."""

    recall_id: str | None = None
    memory_id: str | None = None
    changed: dict[str, str] = Field(default_factory=dict)
    unchanged: list[str] = Field(default_factory=list)
    reinforced: list[str] = Field(default_factory=list)
    reconsolidation: list[str] = Field(default_factory=list)
