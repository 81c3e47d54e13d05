"""Request and response bodies of the write API (DESIGN §4)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pcm_common.domain.memory import Importance, Scope, Source, State

MAX_METADATA_BYTES = 16_384
Name = Field(default=None, min_length=1, max_length=200)


def small_metadata(v: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(v, default=str)) > MAX_METADATA_BYTES:
        raise ValueError(f"metadata over {MAX_METADATA_BYTES} bytes")
    return v


class MemoryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Length limits come from the settings (`max_text_chars`, `max_batch`), checked by the
    # handlers so that an oversized write gets 413 whatever the limit is set to.
    text: str = Field(min_length=1)
    user_id: str | None = Name
    scope: Scope = Scope.GLOBAL
    workspace: str | None = Name
    project: str | None = Name
    created_at: datetime | None = None
    importance: Importance | None = None
    pinned: bool = False
    source: Source = Source.API
    episode: str | None = Name
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is empty")
        return v

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        return small_metadata(v)

    @field_validator("source")
    @classmethod
    def _not_derived(cls, v: Source) -> Source:
        # Episode records are the sweeper's own: a write claiming to be one would pass
        # every capture mode and retention, and the next consolidation run would delete it.
        if v is Source.CONSOLIDATION:
            raise ValueError("source 'consolidation' is reserved for PCM's episode records")
        return v

    @model_validator(mode="after")
    def _scope_names(self) -> MemoryIn:
        if self.scope is Scope.WORKSPACE and not self.workspace:
            raise ValueError("scope 'workspace' needs a workspace")
        if self.scope is Scope.PROJECT and not self.project:
            raise ValueError("scope 'project' needs a project")
        return self


class BatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memories: list[MemoryIn] = Field(min_length=1)


class StoreResult(BaseModel):
    # None only for a skipped capture (nothing stored).
    id: str | None
    status: Literal["created", "reinforced", "merged", "redacted", "skipped"]
    # Why a capture was skipped: `capture_gate` (predictable chatter) or `capture_mode`
    # (the scope's policy keeps no automatic captures). Absent from other results, which
    # keep the contract's `{id, status}`.
    reason: str | None = Field(default=None, exclude_if=lambda v: v is None)


class BatchOut(BaseModel):
    results: list[StoreResult]


class MemoryPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(default=None, min_length=1)
    importance: Importance | None = None
    pinned: bool | None = None
    state: State | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return small_metadata(v) if v is not None else v

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("text is empty")
        return v


class MemoryPage(BaseModel):
    items: list[dict[str, Any]]
    next_offset: str | None
