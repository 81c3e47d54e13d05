"""Anomaly flags for a recall (whitepaper §2.7, §3.7, §3.8; DESIGN §3).

- Surprise: a memory with σ >= 0.7 is flagged when it or a member of its family was
  recalled, ordered by the best recalled rank of the memory or its family.
- Stopped routine: the routines (§3.8, built by the sweeper as it judges memories; see
  `pcm_common.stores.redis.routines`) of the recalled memories and then of the candidates under
  the relevance floor are flagged when regular (N >= 5, cv < 1), quiet for more than 2.5
  median intervals and longer than their longest earlier break plus one interval, with no
  later entry; with their last date and usual interval.

Cheap by construction: families and routines were computed by the sweeper, so a recall costs
one filtered scroll for surprises, two Redis round trips for routines (the first read ahead
by the recall), one point lookup per routine found stopped, and no model call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pcm_common.domain import routine_rules as rr
from pcm_common.domain import surprisal as sp
from pcm_common.ports import RoutinePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.routines import Routine, RoutineIndex
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorStore, payload_matches
from pcm_recall.candidates import visibility
from pcm_recall.schemas import AnomalyFlag, ContextItem, RecallIn
from pcm_recall.settings import RecallSettings

log = get_logger("recall")

MAX_FLAGS = 5
# Routines are checked for the first 40 candidates the recall considered, recalled ones
# first then the pool under the relevance floor: a stopped routine is rare and worth a flag
# whenever the request came near it, and an everyday request ("a meal plan") rarely lands
# among the routine's entries (the weigh-ins) themselves. Flags are ordered by the best
# rank of a routine member, so the nearest routines come first.
# Why 40: docs/decisions/0023-stopped-routine-flag-reach.md.
ROUTINE_SEEDS = 40
# Entries read per routine, the latest up to the recall's `now`: the current run decides
# (routine_state), and 64 entries of it are plenty to judge its regularity.
ROUTINE_WINDOW = 64
SCROLL_LIMIT = 512


@dataclass
class _Info:
    family: list[str]
    ts: float
    text: str
    score: float | None
    differs: str
    usual: str


def _info(payload: Mapping[str, Any]) -> _Info:
    s = payload.get("surprisal") or {}
    score = s.get("score")
    return _Info(
        family=list(s.get("family_ids") or []),
        ts=float(payload.get("created_ts") or 0.0),
        text=str(payload.get("text") or ""),
        score=float(score) if score is not None else None,
        differs=str(s.get("differs") or ""),
        usual=str(s.get("usual") or ""),
    )


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


async def compute(
    vectors: VectorStore,
    routines: RoutineIndex,
    tenant: str,
    ranked_ids: Sequence[str],
    payloads: Mapping[str, Mapping[str, Any]],
    now: datetime,
    visibility: Filter | None = None,
    *,
    max_flags: int = MAX_FLAGS,
    min_score: float = sp.FLAG_MIN_SCORE,
    seeds: int = ROUTINE_SEEDS,
    pool_ids: Sequence[str] = (),
    routine_of: Mapping[str, str | None] | None = None,
) -> list[AnomalyFlag]:
    """Flags for a recall that returned `ranked_ids` (best first), whose payloads are in
    `payloads`; `visibility` is the recall's scope filter (flags never leave it).

    `pool_ids` (optional): vector candidates the recall dropped under its relevance floor,
    best first. They rank after every recalled memory and let an everyday request that
    recalls little still reach its routine through the family rule.
    `routine_of` (optional): routine memberships read ahead (`RoutineIndex.routine_of`);
    the routine lookup then asks Redis only for the ids it lacks."""
    recalled = set(ranked_ids)
    ranked_ids = [*ranked_ids, *(p for p in pool_ids if p not in recalled)]
    if not ranked_ids:
        return []
    rank = {mid: i for i, mid in enumerate(ranked_ids)}
    known: dict[str, _Info] = {mid: _info(p) for mid, p in payloads.items()}
    # -- surprises: recalled themselves, or a family member recalled ------------------
    surprising: dict[str, _Info] = {
        mid: known[mid]
        for mid in ranked_ids
        if mid in known and (known[mid].score or 0.0) >= min_score
    }
    flt = (visibility or Filter()).with_must(**{"surprisal.family_ids": list(ranked_ids)})
    flt.ranges["surprisal.score"] = (min_score, None)
    # The family scroll (a store read in a worker thread) and the routine lookup (Redis)
    # are independent: overlapped.
    (points, _), routine_list = await asyncio.gather(
        vectors.scroll(tenant, flt=flt, limit=SCROLL_LIMIT),
        routines.routines(
            tenant, ranked_ids[:seeds], now.timestamp(), latest=ROUTINE_WINDOW, known=routine_of
        ),
    )
    for p in points:
        known[p.id] = _info(p.payload)
        surprising[p.id] = known[p.id]
    keyed = _surprise_flags(surprising, rank)  # (rank, kind order, flag)

    # -- stopped routines of the top recalled memories --------------------------------
    for found in routine_list:
        flag = await _stopped(vectors, tenant, found, now, known, visibility)
        if flag is not None:
            keyed.append((rank[found.seed], 1, flag))

    keyed.sort(key=lambda k: (k[0], k[1], -(k[2].score or 0.0)))
    return [k[2] for k in keyed[:max_flags]]


def _surprise_flags(
    surprising: dict[str, _Info], rank: dict[str, int]
) -> list[tuple[int, int, AnomalyFlag]]:
    """A surprise flag for each surprising memory that is ranked or has a ranked family
    member, keyed by the best of those ranks (kind order 0: before a stopped routine)."""
    keyed: list[tuple[int, int, AnomalyFlag]] = []
    for mid, info in surprising.items():
        best = min((rank[x] for x in [mid, *info.family] if x in rank), default=None)
        if best is None:
            continue
        keyed.append(
            (
                best,
                0,
                AnomalyFlag(
                    memory_id=mid,
                    kind="surprise",
                    text=info.text,
                    differs=info.differs,
                    usual=info.usual,
                    created_at=_dt(info.ts),
                    score=info.score,
                ),
            )
        )
    return keyed


async def _stopped(
    vectors: VectorStore,
    tenant: str,
    routine: Routine,
    now: datetime,
    known: dict[str, _Info],
    visibility: Filter | None,
) -> AnomalyFlag | None:
    """The flag for a routine that has stopped at `now`, else None. Entries after `now`
    mean it went on. The last entry is read to show it, and only if the recall may see it."""
    if routine.later or not routine.entries:
        return None  # it went on after `now`
    now_ts = now.timestamp()
    state = rr.routine_state([t for _, t in routine.entries], now_ts)
    if state is None or not state.stopped:
        return None
    last = routine.entries[-1][0]
    if last not in known:
        for p in await vectors.get(tenant, [last]):
            if visibility is None or payload_matches(_any_state(visibility), p.payload):
                known[p.id] = _info(p.payload)
    info = known.get(last)
    if info is None:
        return None  # deleted meanwhile, or outside what this recall may see
    days = (now_ts - state.last_ts) / 86400
    since = _dt(state.last_ts).date().isoformat()  # ISO: %Y drops a year's leading zeros
    return AnomalyFlag(
        memory_id=last,
        kind="stopped_routine",
        text=info.text,
        differs=f"stopped: no entry since {since} ({days:.0f} days ago)",
        usual=(
            f"{rr.describe_interval(state.median_gap_s)}; {state.n} entries, median interval "
            f"{state.median_gap_s / 86400:.1f} days"
        ),
        created_at=_dt(info.ts),
        last_at=_dt(state.last_ts),
        usual_interval_days=round(state.median_gap_s / 86400, 2),
    )


async def in_regular_routines(
    routines: RoutineIndex, tenant: str, memory_ids: Sequence[str], now: datetime
) -> set[str]:
    """Those of `memory_ids` whose routine is regular at `now` (`rr.routine_state`:
    at least five entries at steady intervals); precise recall delivers a surprise only
    then. Two Redis round trips at most."""
    if not memory_ids:
        return set()
    found = await routines.routines(tenant, memory_ids, now.timestamp(), latest=ROUTINE_WINDOW)
    regular: set[str] = set()
    for routine in found:
        state = rr.routine_state([t for _, t in routine.entries], now.timestamp())
        if state is not None and state.regular:
            regular |= {mid for mid, _ in routine.entries} & set(memory_ids)
    return regular


def _any_state(flt: Filter) -> Filter:
    """The recall's scope, user and time filter without its state condition: a routine's
    last entry may have been demoted since, and the routine is still the asker's."""
    must = {k: v for k, v in flt.must.items() if k != "state"}
    return Filter(must=must, should=list(flt.should), ranges=dict(flt.ranges))


class RecallFlags:
    """The flags stage of a recall (`compute`), as the settings ask for it, timed, and never
    failing the recall."""

    def __init__(self, res: RoutinePorts, settings: RecallSettings) -> None:
        self.res = res
        self.settings = settings

    async def precise(
        self,
        tenant: str,
        req: RecallIn,
        top: list[ContextItem],
        hits: list[ScoredPoint],
        now: datetime,
        routine_of: asyncio.Task[dict[str, str | None]] | None = None,
    ) -> tuple[list[AnomalyFlag], float]:
        """The flags a precise recall delivers: those the delivered memories raise (their
        own surprise, a surprise in their family, a stopped routine they belong to), and of
        those only the ones whose flagged memory is itself a candidate as close to the
        request as an answer must be (`precise_min_top_cosine`), and for a surprise, whose
        memory belongs to a regular routine (`flags.in_regular_routines`): a chat line that
        differs from loosely similar earlier lines breaks no routine. Judged as always."""
        ids = {c.memory_id for c in top}
        cosine = {h.id: h.score for h in hits}
        delivered = [h for h in hits if h.id in ids]
        flags, ms = await self.recalled(
            tenant, req, top, delivered, now, routine_of, max_flags=len(hits)
        )
        floor = self.settings.precise_min_top_cosine
        near = [f for f in flags if cosine.get(f.memory_id, 0.0) >= floor]
        try:
            regular = await in_regular_routines(
                self.res.routines, tenant, [f.memory_id for f in near if f.kind == "surprise"], now
            )
        except Exception as exc:  # flags never fail a recall
            log.warning("flags_failed", tenant=tenant, error=repr(exc))
            return [], ms
        kept = [f for f in near if f.kind != "surprise" or f.memory_id in regular]
        return kept[:MAX_FLAGS], ms

    async def recalled(
        self,
        tenant: str,
        req: RecallIn,
        top: list[ContextItem],
        hits: list[ScoredPoint],
        now: datetime,
        routine_of: asyncio.Task[dict[str, str | None]] | None = None,
        max_flags: int = MAX_FLAGS,
    ) -> tuple[list[AnomalyFlag], float]:
        """Surprise and stopped-routine flags for what was recalled, and the milliseconds
        they took; never fails a recall. `routine_of`: the candidates' routine memberships,
        being read since the search."""
        if not self.settings.flags_enabled:
            return [], 0.0
        started = time.perf_counter()
        ranked = [c.memory_id for c in top]
        seen = set(ranked)
        pool = [h.id for h in hits if h.id not in seen] if self.settings.flags_use_pool else []
        try:
            flags = await compute(
                self.res.vectors,
                self.res.routines,
                tenant,
                ranked,
                {h.id: h.payload for h in hits},
                now,
                visibility(req, req.include_archived),
                pool_ids=pool,
                routine_of=await routine_of if routine_of is not None else None,
                max_flags=max_flags,
            )
            return flags, round((time.perf_counter() - started) * 1000, 3)
        except Exception as exc:
            log.warning("flags_failed", tenant=tenant, error=repr(exc))
            return [], round((time.perf_counter() - started) * 1000, 3)
