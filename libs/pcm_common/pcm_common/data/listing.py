"""Filters a memory listing takes besides the payload's own fields (`GET /v1/memories` and
the inspector's search): source, importance, a creation time range, flagged surprising,
episode."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Query

from pcm_common.domain.clock import as_utc
from pcm_common.domain.filters import Filter
from pcm_common.domain.memory import Importance, Source
from pcm_common.domain.surprisal import FLAG_MIN_SCORE


class ListingFilters:
    """Query parameters, as a FastAPI dependency (`Annotated[ListingFilters, Depends()]`)."""

    def __init__(
        self,
        source: Source | None = None,
        importance: Importance | None = None,
        created_after: Annotated[
            datetime | None, Query(description="created at or after this instant")
        ] = None,
        created_before: Annotated[
            datetime | None, Query(description="created before this instant")
        ] = None,
        flagged: Annotated[
            bool, Query(description="only memories judged surprising (score >= 0.7)")
        ] = False,
        episode: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    ) -> None:
        self.source = source
        self.importance = importance
        self.created_after = created_after
        self.created_before = created_before
        self.flagged = flagged
        self.episode = episode

    def narrow(self, flt: Filter) -> Filter:
        must = dict(flt.must)
        if self.source is not None:
            must["source"] = self.source.value
        if self.importance is not None:
            must["importance"] = self.importance.value
        if self.episode is not None:
            must["episode"] = self.episode
        ranges = dict(flt.ranges)
        if self.created_after is not None or self.created_before is not None:
            lo = as_utc(self.created_after).timestamp() if self.created_after else None
            # Strictly before: a microsecond under it (created_at keeps microseconds).
            hi = as_utc(self.created_before).timestamp() - 1e-6 if self.created_before else None
            ranges["created_ts"] = (lo, hi)
        if self.flagged:
            ranges["surprisal.score"] = (FLAG_MIN_SCORE, None)
        return replace(flt, must=must, ranges=ranges)


Listing = Annotated[ListingFilters, Depends()]
