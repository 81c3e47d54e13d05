"""Governance per scope (DESIGN §6; the mnemos write-up's scope controls): how memories may
be captured in a scope, how long they are kept, and how many stay active. Pure functions
over plain values; the policies live in Redis (`pcm_common.stores.redis.governance`), ingest
enforces the capture mode and the sweeper's `governance` job the retention and the cap.

A policy is set on one scope: `global` (the tenant's default for every scope), a workspace,
or a project (by name, in whatever workspace). Each field it leaves unset is inherited from
the next wider policy: project, then the memory's workspace, then global, then the built-in
default (capture everything, keep forever, no cap).

- `capture_mode`: `all`; `manual_only` (automatic captures, i.e. hooks, are skipped);
  `hooks_only` (only hook captures are kept; an explicit store is refused).
- `retention_days`: memories last stated longer ago than this (created, repeated or
  rewritten) are deleted (pinned ones never: they are the scope's guardrails). Expiry is the
  one deletion a policy makes, because a retention period is a promise that data is gone.
- `max_memories`: at most this many active memories; over it the weakest (lowest current
  strength, then the oldest) are archived, not deleted: still searchable with
  `include_archived`, as demotion leaves them. Pinned memories count but stay active. The
  cap is enforced at each run of the job: an archived memory that gets used is active again
  (as after demotion), and the next run archives whichever memories are then the weakest,
  so the scope keeps its most used ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pcm_common.domain.memory import Scope, Source


class CaptureMode(StrEnum):
    ALL = "all"
    MANUAL_ONLY = "manual_only"
    HOOKS_ONLY = "hooks_only"


class Policy(BaseModel):
    """What one scope sets; None inherits from the wider scope."""

    model_config = ConfigDict(extra="forbid")

    capture_mode: CaptureMode | None = None
    retention_days: int | None = Field(default=None, ge=1, le=36_500)
    max_memories: int | None = Field(default=None, ge=1, le=10_000_000)

    def is_empty(self) -> bool:
        return self.capture_mode is None and self.retention_days is None and not self.max_memories


class ScopeRef(BaseModel):
    """The scope a policy is set on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: Scope = Scope.GLOBAL
    workspace: str = Field(default="", max_length=200)
    project: str = Field(default="", max_length=200)

    @model_validator(mode="after")
    def _names(self) -> ScopeRef:
        if self.scope is Scope.GLOBAL and (self.workspace or self.project):
            raise ValueError("a global policy names no workspace or project")
        if self.scope is Scope.WORKSPACE and (not self.workspace or self.project):
            raise ValueError("a workspace policy names its workspace (and no project)")
        if self.scope is Scope.PROJECT and (not self.project or self.workspace):
            raise ValueError("a project policy names its project (and no workspace)")
        return self

    @property
    def key(self) -> str:
        return policy_key(self.scope.value, self.workspace or self.project)

    @classmethod
    def from_key(cls, key: str) -> ScopeRef:
        kind, _, name = key.partition(":")
        if kind == "workspace":
            return cls(scope=Scope.WORKSPACE, workspace=name)
        if kind == "project":
            return cls(scope=Scope.PROJECT, project=name)
        return cls()


@dataclass(frozen=True, slots=True)
class Effective:
    """The policy in force for one memory's scope, every field resolved."""

    capture_mode: CaptureMode = CaptureMode.ALL
    retention_days: int | None = None
    max_memories: int | None = None


def policy_key(scope: str, name: str = "") -> str:
    """Where a scope's policy is kept: `global`, `workspace:{name}` or `project:{name}`."""
    return Scope.GLOBAL.value if scope == Scope.GLOBAL.value else f"{scope}:{name}"


def chain(scope: str, workspace: str, project: str) -> list[str]:
    """Policy keys that apply to a memory of this scope, narrowest first."""
    keys = []
    if scope == Scope.PROJECT.value and project:
        keys.append(policy_key(Scope.PROJECT.value, project))
    if scope in (Scope.PROJECT.value, Scope.WORKSPACE.value) and workspace:
        keys.append(policy_key(Scope.WORKSPACE.value, workspace))
    keys.append(policy_key(Scope.GLOBAL.value))
    return keys


def effective(
    policies: Mapping[str, Policy], scope: str, workspace: str, project: str
) -> Effective:
    """Each field from the narrowest policy that sets it (module docstring)."""
    found = [policies[k] for k in chain(scope, workspace, project) if k in policies]
    return Effective(
        capture_mode=next(
            (p.capture_mode for p in found if p.capture_mode is not None), CaptureMode.ALL
        ),
        retention_days=next((p.retention_days for p in found if p.retention_days), None),
        max_memories=next((p.max_memories for p in found if p.max_memories), None),
    )


def is_automatic(source: Source) -> bool:
    """Captures no one asked for explicitly: what hooks send."""
    return source is Source.HOOK


def admits(mode: CaptureMode, source: Source) -> bool:
    """Whether a write from `source` is kept under `mode`. The service's own records
    (consolidation) are not captures and always pass."""
    if source is Source.CONSOLIDATION or mode is CaptureMode.ALL:
        return True
    if mode is CaptureMode.MANUAL_ONLY:
        return not is_automatic(source)
    return is_automatic(source)  # hooks_only


def scope_key(scope: str, workspace: str, project: str) -> tuple[str, str, str]:
    """The names that count for a memory's scope: a global memory stored with a workspace or
    project name is still global, a workspace memory belongs to its workspace only; so a
    stray name does not make a group of its own (with a cap of its own)."""
    if scope == Scope.PROJECT.value:
        return scope, workspace, project
    if scope == Scope.WORKSPACE.value:
        return scope, workspace, ""
    return Scope.GLOBAL.value, "", ""


def last_stated(
    created_at: datetime, repeats: Iterable[object], edits: Iterable[object]
) -> datetime:
    """When a memory was last said: its creation, its latest repeat (a duplicate merged into
    it) or its latest text edit. Retention counts from here, so a fact restated yesterday is
    not deleted as if it were last heard a month ago. Unreadable dates are skipped."""
    latest = created_at
    for raw in (*repeats, *edits):
        try:
            at = datetime.fromisoformat(str(raw))
        except ValueError:
            continue
        at = at.replace(tzinfo=UTC) if at.tzinfo is None else at
        latest = max(latest, at)
    return latest


def expired(last_stated: datetime, retention_days: int | None, now: datetime) -> bool:
    return retention_days is not None and last_stated < now - timedelta(days=retention_days)


@dataclass(frozen=True, slots=True)
class CapEntry:
    """What the cap needs of an active memory."""

    memory_id: str
    strength: float
    created_ts: float
    pinned: bool


def over_cap(entries: Iterable[CapEntry], cap: int | None) -> list[str]:
    """Ids to archive so that at most `cap` active memories remain: the weakest unpinned
    ones, the oldest first among equals. Pinned memories are never chosen, so a scope with
    more pins than its cap keeps only its pins active."""
    every = list(entries)
    if cap is None or len(every) <= cap:
        return []
    candidates = sorted(
        (e for e in every if not e.pinned), key=lambda e: (e.strength, e.created_ts, e.memory_id)
    )
    return [e.memory_id for e in candidates[: len(every) - cap]]
