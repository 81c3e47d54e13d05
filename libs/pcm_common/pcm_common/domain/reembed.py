"""Pure parts of moving a store to another embedding model (`pcm_common.data.reembed`):
what the job's record says to a client, and when two stored payloads are the same."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Floats a store gives back may be a unit in the last place off what was written
# (`qdrant.edge.store`): the agreement check must not read that as a change.
_REL_TOL = 1e-9


def same_payload(a: Any, b: Any) -> bool:
    """Whether two payloads (or parts of them) hold the same values, floats within a
    relative 1e-9; an int and a float of the same value are the same."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=1e-12)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_payload(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_payload(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _num(value: str | None, kind: type[int] | type[float] = int) -> Any:
    try:
        return kind(value) if value else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Progress:
    """A job's state as `GET /v1/admin/reembed` answers it."""

    job_id: str | None
    status: str  # none | running | switching | done
    model: str | None  # the model the job moves to
    from_model: str | None
    store_model: str  # the model the store's vectors are made with now
    done: int
    total: int
    resumed: int
    started_at: float | None
    finished_at: float | None
    error: str | None

    @classmethod
    def of(cls, record: Mapping[str, str], *, store_model: str) -> Progress:
        """From the job's Redis record (`keys.REEMBED`; empty: no job ever ran)."""
        return cls(
            job_id=record.get("id") or None,
            status=record.get("status") or "none",
            model=record.get("model") or None,
            from_model=record.get("from_model") or None,
            store_model=store_model,
            done=_num(record.get("done")) or 0,
            total=_num(record.get("total")) or 0,
            resumed=_num(record.get("resumed")) or 0,
            started_at=_num(record.get("started_at"), float),
            finished_at=_num(record.get("finished_at"), float),
            error=record.get("error") or None,
        )

    @property
    def fraction(self) -> float:
        """How far the copy is, 0 to 1 (1 once switched; points written during the job
        can take `done` past the total counted at its start)."""
        if self.status == "done":
            return 1.0
        if self.total <= 0:
            return 0.0
        return min(1.0, self.done / self.total)

    def public(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "status": self.status,
            "model": self.model,
            "from_model": self.from_model,
            "store_model": self.store_model,
            "done": self.done,
            "total": self.total,
            "fraction": round(self.fraction, 4),
            "resumed": self.resumed,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "error": self.error,
        }
