"""Request and response bodies of the write API (DESIGN §4)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pcm_common.domain.memory import Importance, Scope, Source, State
from pcm_common.text.clean import NulFree, is_blank

MAX_METADATA_BYTES = 16_384
# Nesting levels of metadata: the vector engine's payload decoder stops at a recursion
# limit, and one stored payload past it failed every later read of the tenant (and the
# shard's WAL replay at start-up).
MAX_METADATA_DEPTH = 16
# Metadata integers: signed 64-bit, what the vector store's payloads hold (a larger one
# broke the write with a 500, or came back as a float).
INT64 = (-(2**63), 2**63 - 1)
Name = Field(default=None, min_length=1, max_length=200)


def _plain(value: Any, depth: int) -> None:
    """`depth`: the objects and arrays `value` sits in, itself included if it is one."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("metadata numbers must be finite (NaN and Infinity are not JSON)")
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        raise ValueError("metadata integers must fit in 64 bits (-2^63 to 2^63-1)")
    if isinstance(value, dict | list) and depth > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, dict):
        for item in value.values():
            _plain(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _plain(item, depth + 1)


def small_metadata(v: dict[str, Any]) -> dict[str, Any]:
    """Metadata as stored: at most `MAX_METADATA_BYTES` of JSON, `MAX_METADATA_DEPTH`
    levels, finite numbers only, integers of 64 bits."""
    _plain(v, 1)
    if len(json.dumps(v, default=str)) > MAX_METADATA_BYTES:
        raise ValueError(f"metadata over {MAX_METADATA_BYTES} bytes")
    return v


class MemoryIn(NulFree):
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
        if is_blank(v):
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
        # Without a scope, the narrowest one the write names (as the CLI and MCP do): a
        # note naming a project was stored global, and every other project recalled it.
        if "scope" not in self.model_fields_set:
            self.scope = (
                Scope.PROJECT
                if self.project
                else Scope.WORKSPACE
                if self.workspace
                else Scope.GLOBAL
            )
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
    # Why a capture was skipped: `capture_gate` (predictable chatter), `low_salience`
    # (the predictive gate: buffered for consolidation) or `capture_mode` (the scope's
    # policy keeps no automatic captures). Absent from other results, which
    # keep the contract's `{id, status}`.
    reason: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # An automatic capture the predictive gate judged (`low_salience` when it skipped
    # it): its prediction error in [0, 1]. Absent from explicit stores.
    salience: float | None = Field(default=None, exclude_if=lambda v: v is None)


class BatchOut(BaseModel):
    results: list[StoreResult]


class MemoryPatch(NulFree):
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
        if v is not None and is_blank(v):
            raise ValueError("text is empty")
        return v


class MemoryPage(BaseModel):
    items: list[dict[str, Any]]
    next_offset: str | None
    # With `count=true`: every memory the filters match (all pages), else None.
    total: int | None = None


class MemoryVersion(BaseModel):
    """One text a memory has had (`GET /v1/memories/{id}/history`, `domain.versions`)."""

    version: int
    text: str
    # When this text became the memory's: its creation for the first, else when the one
    # before it was replaced.
    at: datetime | None = None
    current: bool = False
    # Of an earlier version: when it was replaced, by what ("edit": a PATCH;
    # "reconsolidation": the sweeper's rewrite) and, for a rewrite, the memory whose newer
    # information replaced it. None on edits from before these were kept.
    changed_at: datetime | None = None
    reason: str | None = None
    by: str | None = None


class MemoryHistory(BaseModel):
    id: str
    versions: list[MemoryVersion]
    supersedes: str | None = None
    superseded_by: str | None = None
