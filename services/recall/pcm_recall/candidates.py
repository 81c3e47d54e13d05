"""Candidates: what a request sees (`visibility`), narrowed to the time its query names
(`created_within`), and the two searches' candidates merged (`within_span`)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime
from typing import Any

from pcm_common.domain import supersession
from pcm_common.domain.clock import as_utc
from pcm_common.domain.visibility import audience
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_recall.schemas import RecallIn


def visibility(req: RecallIn, include_archived: bool) -> Filter:
    """What the request sees (`audience`), in the states it asks for, created before its
    `created_before`, without episode records."""
    seen = audience(req.user_id, req.workspace, req.project)
    states = ["active", "archived"] if include_archived else ["active"]
    if req.include_superseded or supersession.asks_about_past(req.query):
        states.append("superseded")
    must: dict[str, Any] = {"state": states, **seen.must}
    ranges: dict[str, tuple[float | None, float | None]] = {}
    if req.created_before:
        # Ranges are inclusive: the largest float below the instant keeps it out.
        ranges["created_ts"] = (
            None,
            math.nextafter(as_utc(req.created_before).timestamp(), -math.inf),
        )
    # Episode records are returned whole through their seeds, not as competing candidates
    # (distilled facts, `kind: "fact"`, compete as any memory does).
    return Filter(must=must, should=seen.should, must_not={"kind": "episode"}, ranges=ranges)


NOT_EPISODE_RECORDS = Filter(must_not={"kind": "episode"})


def created_within(flt: Filter, span: tuple[datetime, datetime]) -> Filter | None:
    """`flt` narrowed to memories created in [start, end) of `span` (and still inside any
    range `flt` had); None when nothing can be in both."""
    lo, hi = span[0].timestamp(), math.nextafter(span[1].timestamp(), -math.inf)
    old_lo, old_hi = flt.ranges.get("created_ts", (None, None))
    lo = lo if old_lo is None else max(lo, old_lo)
    hi = hi if old_hi is None else min(hi, old_hi)
    if lo > hi:
        return None
    return replace(flt, ranges={**flt.ranges, "created_ts": (lo, hi)})


def within_span(
    hits: list[ScoredPoint], inside: list[ScoredPoint], weight: float
) -> list[ScoredPoint]:
    """The candidates of a query that names a time: those of the whole store (`hits`) and
    those of the search restricted to that time (`inside`), each memory once, with the
    higher of its fused rank score overall and `weight` x its fused rank score among the
    memories of that time. So the best match written then ranks with the best match
    overall, whatever older or newer memories share its words."""
    if not inside:
        return hits
    merged = {h.id: h for h in hits}
    for p in inside:
        if p.fused is None:  # a dense-only search: the cosine, the same in both
            merged.setdefault(p.id, p)
            continue
        boosted = p.fused * weight
        have = merged.get(p.id)
        if have is None:
            merged[p.id] = replace(p, fused=boosted)
        elif have.fused is not None and boosted > have.fused:
            merged[p.id] = replace(have, fused=boosted)
    return list(merged.values())
