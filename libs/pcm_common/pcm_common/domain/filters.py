"""Payload filters as data: a conjunction of conditions that every vector-store adapter
translates to its engine, and that `payload_matches` evaluates in process (reads by id,
cached points)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Filter:
    """Conjunction of conditions on payload fields (dotted paths allowed).

    `must`: field -> value (equality) or list of values (any of).
    `must_not`: same shape, excluded.
    `ranges`: field -> (gte, lte), either end may be None.
    `should`: groups of `must`-style dicts of which at least one must match (scope visibility).
    """

    must: dict[str, Any] = field(default_factory=dict)
    must_not: dict[str, Any] = field(default_factory=dict)
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    should: list[dict[str, Any]] = field(default_factory=list)

    def with_must(self, **must: Any) -> Filter:
        """A copy with more `must` conditions (one given here replaces the same field's)."""
        return Filter(
            must={**self.must, **must},
            must_not=dict(self.must_not),
            ranges=dict(self.ranges),
            should=list(self.should),
        )


def payload_matches(flt: Filter, payload: dict[str, Any]) -> bool:
    """``Filter`` semantics evaluated on a payload in process: `VectorStore.get` by id does
    not filter, and cached points (the pinned cache) are checked per request."""

    def value(path: str) -> Any:
        cur: Any = payload
        for part in path.split("."):
            if not isinstance(cur, dict):
                return None
            cur = cur.get(part)
        return cur

    def eq(path: str, want: Any) -> bool:
        got = value(path)
        if want is None:  # "is empty", as the adapters say it
            return got is None or got == []
        # A list in the payload matches when any of its values does, as in Qdrant.
        values = got if isinstance(got, list) else [got]
        wanted = want if isinstance(want, list) else [want]
        return any(g in wanted for g in values)

    if not all(eq(k, v) for k, v in flt.must.items()):
        return False
    if any(eq(k, v) for k, v in flt.must_not.items()):
        return False
    for k, (lo, hi) in flt.ranges.items():
        got = value(k)
        if not isinstance(got, int | float):
            return False
        if (lo is not None and got < lo) or (hi is not None and got > hi):
            return False
    return not flt.should or any(all(eq(k, v) for k, v in g.items()) for g in flt.should)
