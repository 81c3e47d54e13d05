"""Consolidation of short-term memories into episode records (DESIGN §6, whitepaper §2.4).

Pure rules, no I/O. Definitions:

- *related*: the memories share an `episode` (the client's session / conversation id) and
  a visibility group (user, scope, workspace, project), so an episode record is never
  visible where one of its sources is not.
- *short-term*: ordinary memories (not pinned, not superseded, not themselves episode
  records) of an episode that has been quiet for `SETTLE` (its newest member was saved at
  least that long before `now`): an episode still being written is left alone.
- an episode *qualifies* with at least `MIN_MEMBERS` such memories.

The record's text is the sources' own texts in time order, one dated line each (never a
model-written summary: those cost accuracy, whitepaper §5.7); the sources stay as they are.
Its id is derived from tenant, episode and visibility group, so re-running never creates
a second record, and an episode that grew gets the same record rewritten.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

MIN_MEMBERS = 3  # *start*
SETTLE = timedelta(hours=6)  # *start*: quiet time before an episode counts as short-term done
# Fixed namespace: ids must be identical on every replica and across releases.
NAMESPACE = uuid.UUID("6f1c3c1e-8a53-5d7e-9a43-3c2b0f0e5c11")


@dataclass(frozen=True)
class GroupKey:
    """What must be equal for memories to share one episode record."""

    episode: str
    user_id: str | None = None
    scope: str = "global"
    workspace: str = ""
    project: str = ""


@dataclass(frozen=True)
class Member:
    id: str
    text: str
    created_at: datetime


def record_id(tenant: str, key: GroupKey) -> str:
    """Deterministic point id of the episode record (uuid5 of tenant and episode group)."""
    parts = [tenant, key.episode, key.user_id or "", key.scope, key.workspace, key.project]
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


def is_candidate(*, source: str, state: str, pinned: bool, episode: str | None) -> bool:
    """Whether a stored memory can be a source of an episode record."""
    return (
        bool(episode)
        and source != "consolidation"
        and state in ("active", "archived")  # demoted evidence stays part of its episode
        and not pinned  # pinned rules are delivered on their own, every time
    )


def ordered(members: Iterable[Member]) -> list[Member]:
    """Time order; the id breaks ties so every replica renders the same text."""
    return sorted(members, key=lambda m: (m.created_at, m.id))


def qualifies(
    members: Sequence[Member],
    now: datetime,
    *,
    min_members: int = MIN_MEMBERS,
    settle: timedelta = SETTLE,
) -> bool:
    """Enough members, and the newest was saved at least `settle` before `now`."""
    if len(members) < min_members:
        return False
    return max(m.created_at for m in members) <= now - settle


def render(members: Sequence[Member]) -> str:
    """One dated line per source, oldest first: "[2023-05-08 13:56] text"."""
    return "\n".join(f"[{m.created_at:%Y-%m-%d %H:%M}] {m.text}" for m in ordered(members))


def source_ids(members: Sequence[Member]) -> list[str]:
    return [m.id for m in ordered(members)]


def first_created(members: Sequence[Member]) -> datetime:
    return min(m.created_at for m in members)


def is_current(
    existing_sources: Sequence[str] | None,
    existing_text: str | None,
    members: Sequence[Member],
) -> bool:
    """The stored record already matches these members (same sources, same text)."""
    return (
        existing_sources is not None
        and list(existing_sources) == source_ids(members)
        and existing_text == render(members)
    )
