"""A memory's versions: the earlier texts kept in its payload's `history` when a new text
replaces one (a PATCH, or a reconsolidation rewrite), and the list
`GET /v1/memories/{id}/history` answers. Pure, no I/O.

A history entry is the text that was replaced: `{"version", "text", "changed_at"}` (when it
was replaced), plus `reason` ("edit", "reconsolidation") and `by` (the memory whose newer
information rewrote it) where known; entries of edits from before `reason` existed have
none. Nothing is ever removed from a history: a rewrite only appends.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def entry(
    version: int, text: str, replaced_at: datetime, *, reason: str, by: str | None = None
) -> dict[str, Any]:
    """The history entry of the text `text` (version `version`) replaced at `replaced_at`."""
    out: dict[str, Any] = {
        "version": version,
        "text": text,
        "changed_at": replaced_at.isoformat(),
        "reason": reason,
    }
    if by is not None:
        out["by"] = by
    return out


def listed(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Every version of a stored memory, oldest first, each with its text, `at` (when it
    became the memory's text: the creation time for the first, else when the one before
    it was replaced) and `current` for the last; an earlier one keeps its entry's fields."""
    history = [dict(h) for h in payload.get("history") or [] if isinstance(h, dict)]
    at: Any = payload.get("created_at")
    out: list[dict[str, Any]] = []
    for h in history:
        out.append({**h, "at": at, "current": False})
        at = h.get("changed_at", at)
    current = {
        "version": payload.get("version", len(history) + 1),
        "text": payload.get("text", ""),
        "at": at,
        "current": True,
    }
    return [*out, current]
