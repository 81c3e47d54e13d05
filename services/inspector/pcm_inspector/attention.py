"""What needs attention in a tenant: its routines (usual interval, last entry, state) with
the stopped ones, and the memories judged surprising. Read from the routine index and the
memories' surprisal verdicts, judged by the same rules the recall's flags use."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from pcm_common.domain import routine_rules as rr
from pcm_common.domain import surprisal as sp
from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis.routines import Routine
from pcm_common.stores.vectors import Filter

# A readable page, not an export: the most recent routines and surprises.
MAX_ROUTINES = 100
MAX_SURPRISES = 50


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def _routine(r: Routine, texts: dict[str, str], now: float) -> dict[str, Any]:
    times = [t for _, t in r.entries]
    state = rr.routine_state(times, now)
    last_id = r.entries[-1][0]
    return {
        "id": r.id,
        "entries": [{"memory_id": m, "at": _dt(t)} for m, t in r.entries],
        "later": r.later,
        "last_at": _dt(times[-1]),
        "last_memory": {"id": last_id, "text": texts.get(last_id, "")},
        "usual_interval_days": round(state.median_gap_s / 86400, 2) if state else None,
        "usual": rr.describe_interval(state.median_gap_s) if state else None,
        # too_few: under the entries a routine needs to be judged at all.
        "state": "too_few"
        if state is None
        else "stopped"
        if state.stopped and not r.later
        else "regular"
        if state.regular
        else "irregular",
    }


async def attention_view(res: Resources, tenant: str, now: datetime) -> dict[str, Any]:
    surprising = Filter(ranges={"surprisal.score": (sp.FLAG_MIN_SCORE, None)})
    routines, (points, _) = await asyncio.gather(
        res.routines.listed(tenant, now.timestamp(), limit=MAX_ROUTINES),
        res.vectors.scroll(
            tenant, flt=surprising, limit=MAX_SURPRISES, fields=["text", "created_at", "surprisal"]
        ),
    )
    # Only memories still stored are shown (a routine may name one deleted since).
    found = await res.vectors.get(tenant, [r.entries[-1][0] for r in routines], fields=["text"])
    texts = {p.id: str(p.payload.get("text", "")) for p in found}
    listed = [_routine(r, texts, now.timestamp()) for r in routines if r.entries[-1][0] in texts]
    listed.sort(key=lambda r: (r["state"] != "stopped", -r["last_at"].timestamp()))
    surprises = [
        {
            "memory_id": p.id,
            "text": p.payload.get("text", ""),
            "created_at": p.payload.get("created_at"),
            "score": p.payload["surprisal"].get("score"),
            "differs": p.payload["surprisal"].get("differs", ""),
            "usual": p.payload["surprisal"].get("usual", ""),
        }
        for p in points
    ]
    surprises.sort(key=lambda s: -(s["score"] or 0.0))
    return {"now": now, "min_score": sp.FLAG_MIN_SCORE, "routines": listed, "surprises": surprises}
