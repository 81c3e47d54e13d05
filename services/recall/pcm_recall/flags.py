"""Anomaly flags for a recall (whitepaper §2.7, §3.7, §3.8; DESIGN §3).

- Surprise: a memory with σ >= 0.7 is flagged when it or a member of its family was
  recalled, ordered by the best recalled rank of the memory or its family.
- Stopped routine: for the recalled memories and then the candidates under the relevance
  floor, the routine {m} ∪ F(m) ∪ memories whose family shares >= 2 members with it
  (applied until nothing joins, so a long routine's latest entries are reached) is flagged
  when regular (N >= 5, cv < 1), quiet for more than 2.5 median intervals and longer than
  its longest earlier break plus one interval, and no later entry exists; with its last
  date and usual interval.

Cheap by construction: the families were computed by the sweeper, so a recall costs one
filtered scroll for surprises, at most ROUTINE_HOPS scrolls and one point lookup for
routines, one more scroll per routine found stopped (to confirm nothing came later), and
no model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pcm_common.domain import surprisal as sp
from pcm_common.stores.vectors import Filter, VectorStore
from pcm_recall.schemas import AnomalyFlag

MAX_FLAGS = 5
# Routines are checked for the first 40 candidates the recall considered, recalled ones
# first then the pool under the relevance floor: a stopped routine is rare and worth a flag
# whenever the request came near it, and an everyday request ("a meal plan") rarely lands
# among the routine's entries (the weigh-ins) themselves. Flags are ordered by the best
# rank of a routine member, so the nearest routines come first. Dev absence set: 40 seeds
# flag 24/24 stopped routines (25 seeds: 22/24) at a third of the cost of 100.
ROUTINE_SEEDS = 40
ROUTINE_HOPS = 3
SCROLL_LIMIT = 512
LATER_LIMIT = 64  # later entries read to confirm that a routine has stopped


@dataclass
class _Info:
    family: list[str]
    ts: float
    repeats: list[float]
    text: str
    score: float | None
    differs: str
    usual: str


def _info(payload: Mapping[str, Any]) -> _Info:
    s = payload.get("surprisal") or {}
    score = s.get("score")
    repeats: list[float] = []
    for r in payload.get("repeats") or []:
        try:
            repeats.append(datetime.fromisoformat(str(r)).timestamp())
        except ValueError:
            continue
    return _Info(
        family=list(s.get("family_ids") or []),
        ts=float(payload.get("created_ts") or 0.0),
        repeats=repeats,
        text=str(payload.get("text") or ""),
        score=float(score) if score is not None else None,
        differs=str(s.get("differs") or ""),
        usual=str(s.get("usual") or ""),
    )


def _with(flt: Filter | None, **must: Any) -> Filter:
    base = flt or Filter()
    return Filter(
        must={**base.must, **must},
        must_not=dict(base.must_not),
        ranges=dict(base.ranges),
        should=list(base.should),
    )


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


async def compute(
    vectors: VectorStore,
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
) -> list[AnomalyFlag]:
    """Flags for a recall that returned `ranked_ids` (best first), whose payloads are in
    `payloads`; `visibility` is the recall's scope filter (flags never leave it).

    `pool_ids` (optional): vector candidates the recall dropped under its relevance floor,
    best first. They rank after every recalled memory and let an everyday request that
    recalls little still reach its routine through the family rule."""
    recalled = set(ranked_ids)
    ranked_ids = [*ranked_ids, *(p for p in pool_ids if p not in recalled)]
    if not ranked_ids:
        return []
    rank = {mid: i for i, mid in enumerate(ranked_ids)}
    known: dict[str, _Info] = {mid: _info(p) for mid, p in payloads.items()}
    keyed: list[tuple[int, int, AnomalyFlag]] = []  # (rank, kind order, flag)

    # -- surprises: recalled themselves, or a family member recalled ------------------
    surprising: dict[str, _Info] = {
        mid: known[mid]
        for mid in ranked_ids
        if mid in known and (known[mid].score or 0.0) >= min_score
    }
    flt = _with(visibility, **{"surprisal.family_ids": list(ranked_ids)})
    flt.ranges["surprisal.score"] = (min_score, None)
    points, _ = await vectors.scroll(tenant, flt=flt, limit=SCROLL_LIMIT)
    for p in points:
        known[p.id] = _info(p.payload)
        surprising[p.id] = known[p.id]
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

    # -- stopped routines of the top recalled memories --------------------------------
    seed_ids = [m for m in ranked_ids[:seeds] if m in known and known[m].family]
    if seed_ids:
        await _expand(vectors, tenant, seed_ids, known, visibility)
        families = {mid: info.family for mid, info in known.items()}
        holders = sp.family_holders(families)  # built once: routines grow through it
        now_ts = now.timestamp()
        seen_last: set[str] = set()
        covered: set[str] = set()
        for seed in seed_ids:
            if seed in covered:
                continue  # already part of a better-ranked seed's routine
            members, times, state = _evaluate(seed, families, holders, known, now_ts)
            covered |= members
            if state is None or not state.stopped:
                continue
            # Before calling it stopped, look for later entries the bounded expansion may
            # have missed (a long routine in a large tenant): a routine that goes on is
            # never flagged.
            if await _later(vectors, tenant, members, state.last_ts, known, visibility):
                families = {mid: info.family for mid, info in known.items()}
                holders = sp.family_holders(families)
                members, times, state = _evaluate(seed, families, holders, known, now_ts)
                covered |= members
                if state is None or not state.stopped:
                    continue
            last = max(times, key=lambda m: max(t for t in times[m] if t <= now_ts))
            if last in seen_last:
                continue
            seen_last.add(last)
            days = (now_ts - state.last_ts) / 86400
            interval = sp.describe_interval(state.median_gap_s)
            keyed.append(
                (
                    rank[seed],
                    1,
                    AnomalyFlag(
                        memory_id=last,
                        kind="stopped_routine",
                        text=known[last].text,
                        differs=(
                            f"stopped: no entry since {_dt(state.last_ts):%Y-%m-%d} "
                            f"({days:.0f} days ago)"
                        ),
                        usual=(
                            f"{interval}; {state.n} entries, median interval "
                            f"{state.median_gap_s / 86400:.1f} days"
                        ),
                        created_at=_dt(known[last].ts),
                        last_at=_dt(state.last_ts),
                        usual_interval_days=round(state.median_gap_s / 86400, 2),
                    ),
                )
            )

    keyed.sort(key=lambda k: (k[0], k[1], -(k[2].score or 0.0)))
    return [k[2] for k in keyed[:max_flags]]


async def _expand(
    vectors: VectorStore,
    tenant: str,
    seeds: Sequence[str],
    known: dict[str, _Info],
    visibility: Filter | None,
) -> None:
    """Load what the seeds' routines need: their family members (dates) and every memory
    whose family mentions a routine member, hop by hop from the seeds."""
    frontier = set(seeds)
    for s in seeds:
        frontier.update(known[s].family)
    asked: set[str] = set()
    for _ in range(ROUTINE_HOPS):
        ask = sorted(frontier - asked)
        if not ask:
            break
        asked.update(ask)
        points, _ = await vectors.scroll(
            tenant,
            flt=_with(visibility, **{"surprisal.family_ids": ask}),
            limit=SCROLL_LIMIT,
        )
        new: set[str] = set()
        for p in points:
            if p.id not in known:
                known[p.id] = _info(p.payload)
            new.add(p.id)
        frontier = new
    missing = sorted({f for s in seeds for f in known[s].family} - known.keys())
    if missing:
        for p in await vectors.get(tenant, missing):
            known[p.id] = _info(p.payload)


async def _later(
    vectors: VectorStore,
    tenant: str,
    members: set[str],
    after_ts: float,
    known: dict[str, _Info],
    visibility: Filter | None,
) -> bool:
    """Load the memories written after `after_ts` whose family mentions a routine member;
    True when any of them was not known yet."""
    flt = _with(visibility, **{"surprisal.family_ids": sorted(members)})
    flt.ranges["created_ts"] = (after_ts + 1e-3, None)
    points, _ = await vectors.scroll(tenant, flt=flt, limit=LATER_LIMIT)
    new = False
    for p in points:
        if p.id not in known:
            known[p.id] = _info(p.payload)
            new = True
    return new


def _evaluate(
    seed: str,
    families: Mapping[str, Sequence[str]],
    holders: Mapping[str, set[str]],
    known: Mapping[str, _Info],
    now_ts: float,
) -> tuple[set[str], dict[str, list[float]], sp.RoutineState | None]:
    """The seed's routine, its entry times per member and its state at `now_ts`."""
    members = sp.routine_closure(seed, families, holders)
    # A duplicate stored once still marks each of its repeats as an entry.
    times = {m: [known[m].ts, *known[m].repeats] for m in members if m in known}
    state = sp.routine_state([t for ts in times.values() for t in ts], now_ts)
    return members, times, state
