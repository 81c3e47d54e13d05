"""Routine kin on real stores (Qdrant Edge in a temp dir, the routine index in Redis): a
routine written in two wordings far apart in embedding space. A new entry in the terse
wording finds only its few look-alikes as family; the routine index lends it the other
wording's entries, so it is judged (and its outlier flagged) instead of left unjudged.

Vectors are set by hand so the geometry is exact: the long wording R, the terse one N near
R (cos 0.8: it joined R's routine), and the new entry O near N (0.85) but under the family
threshold to R (0.43)."""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pcm_common.domain.memory import MemoryRecord, Strength, text_hash
from pcm_common.messaging.events import MemoryWritten
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.stores.vectors import VectorPoint
from pcm_sweeper.judging import Judging
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS

T0 = datetime(2024, 3, 4, 19, 0, tzinfo=UTC)
DIM = 384


def unit(*parts: tuple[int, float]) -> list[float]:
    v = [0.0] * DIM
    for i, w in parts:
        v[i] += w
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def entries(outlier_minutes: int) -> list[tuple[str, list[float], datetime]]:
    long = [42, 45, 40, 47, 44, 43]
    out = [
        (f"Weekly call with Mom: {m} minutes.", unit((0, 1), (1, 0.5), (10 + i, 0.2)), i)
        for i, m in enumerate(long)
    ]
    out += [
        (f"call w/ Mom - {m}m", unit((1, 1), (0, 0.55), (20 + j, 0.2)), 6 + j)
        for j, m in enumerate((46, 41))
    ]
    out.append((f"call w/ Mom - {outlier_minutes}m", unit((1, 1), (30, 0.2)), 8))
    return [(t, v, T0 + timedelta(days=7 * week)) for t, v, week in out]


@pytest.fixture
async def res(tmp_path: Path) -> AsyncIterator[Resources]:
    r = Resources(PcmSettings(redis_url=f"{TEST_REDIS}/13", qdrant_path=tmp_path / "q"))
    await r.vectors.ensure_collection()
    yield r
    await r.aclose()


async def judge_in_order(
    res: Resources, tenant: str, items: list[tuple[str, list[float], datetime]], kin: bool
) -> list[str]:
    judging = Judging(res, SweeperSettings(redis_url=f"{TEST_REDIS}/13", surprisal_kin=kin))
    ids = []
    for text, vec, at in items:
        rec = MemoryRecord(
            id=str(uuid.uuid4()),
            tenant=tenant,
            text=text,
            text_hash=text_hash(text),
            created_at=at,
            ingested_at=at,
            strength=Strength(t_ref=at),
        )
        await res.vectors.upsert([VectorPoint(id=rec.id, vector=vec, payload=rec.to_payload())])
        await judging.on_written(
            MemoryWritten(tenant=tenant, memory_id=rec.id, text=text, created_at=at)
        )
        ids.append(rec.id)
    return ids


@pytest.mark.parametrize("kin", [True, False])
async def test_a_terse_entry_is_judged_against_its_routine_in_other_wordings(
    res: Resources, kin: bool
) -> None:
    tenant = f"kin-{uuid.uuid4().hex[:8]}"
    ids = await judge_in_order(res, tenant, entries(outlier_minutes=160), kin)
    got = {p.id: p.payload["surprisal"] for p in await res.vectors.get(tenant, ids)}
    outlier = got[ids[-1]]
    # The family search finds the two terse look-alikes only, either way.
    assert set(outlier["family_ids"]) == set(ids[6:8])
    routine = await res.routines.routine_of(tenant, ids[:8])
    assert len(set(routine.values())) == 1 and None not in routine.values()
    if kin:
        assert set(outlier["kin_ids"]) == set(ids[:6])
        assert outlier["score"] >= 0.7 and "160m" in outlier["differs"]
        assert "over 8 earlier entries" in outlier["usual"]
    else:
        assert outlier["kin_ids"] == [] and outlier["score"] is None


async def test_a_usual_terse_entry_is_judged_and_not_flagged(res: Resources) -> None:
    tenant = f"kin-{uuid.uuid4().hex[:8]}"
    ids = await judge_in_order(res, tenant, entries(outlier_minutes=44), kin=True)
    (last,) = await res.vectors.get(tenant, [ids[-1]])
    verdict = last.payload["surprisal"]
    assert verdict["score"] is not None and verdict["score"] < 0.7


def weekly_then(days_after_last: float) -> list[tuple[str, list[float], datetime]]:
    """Six weekly entries close to one another, then one with no family (cosine 0.40 to
    each: under the family threshold, over the near one) `days_after_last` days later."""
    out = [
        (
            f"Weekly call with Mom: {m} minutes.",
            unit((0, 1), (10 + i, 0.2)),
            T0 + timedelta(days=7 * i),
        )
        for i, m in enumerate([42, 45, 40, 47, 44, 43])
    ]
    at = out[-1][2] + timedelta(days=days_after_last)
    out.append(("Phoned Dad, 44 minutes.", unit((0, 0.45), (50, 1)), at))
    return out


@pytest.mark.parametrize(("days", "lent"), [(7, True), (6, True), (2, False), (12, False)])
async def test_a_familyless_entry_due_in_a_routine_is_judged_against_it(
    res: Resources, days: float, lent: bool
) -> None:
    tenant = f"kin-{uuid.uuid4().hex[:8]}"
    ids = await judge_in_order(res, tenant, weekly_then(days), kin=True)
    (last,) = await res.vectors.get(tenant, [ids[-1]])
    verdict = last.payload["surprisal"]
    assert verdict["family_ids"] == []
    if lent:  # the routine expected an entry then: its entries are the comparison
        assert set(verdict["kin_ids"]) == set(ids[:6])
        assert verdict["score"] is not None and "6 earlier entries" in verdict["usual"]
    else:  # off the routine's schedule: nothing to judge it against
        assert verdict["kin_ids"] == [] and verdict["score"] is None
