"""The judge's family search by calendar keys finds exactly what the `created_ts` range
finds, on a real Qdrant Edge shard with real MiniLM vectors, memories stored out of time
order, later memories in the same hour, and a payload written before `time_keys` existed;
and a store with the dense mirror, asked the range search only, finds the same families."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from pcm_common.domain import surprisal as sp
from pcm_common.domain.memory import MemoryRecord
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.stores.qdrant.edge import time_keys
from pcm_common.stores.vectors import ScoredPoint
from pcm_sweeper.judging import Judging
from tests.conftest import TEST_REDIS
from tests.integration.test_anomaly_flags import RUN_TEXTS, T0, store


@pytest.fixture(params=[0, 100_000], ids=["engine", "mirror"])
async def res(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Resources]:
    """Resources on a fresh shard, without and with the dense mirror."""
    settings = PcmSettings(
        redis_url=f"{TEST_REDIS}/13",
        qdrant_path=tmp_path / "q",
        qdrant_dense_mirror=request.param,
    )
    r = Resources(settings)
    await r.vectors.ensure_collection()
    yield r
    await r.aclose()


async def exact_family(judging: Judging, tenant: str, point: ScoredPoint) -> list[str]:
    """The family as the range search alone finds it."""
    at = MemoryRecord.from_payload(point.payload).created_at
    # With its cut as an explicit range, the query is searched as it is.
    (hits,) = await judging.res.vectors.search_many(
        [judging._family_query((tenant, point), at).ranged()]
    )
    return sp.select_family(
        (
            sp.Candidate(h.id, h.score, float(h.payload["created_ts"]))
            for h in hits
            if h.id != point.id
        ),
        at.timestamp() - sp.SIMULTANEOUS_S,
    )


def searches(kind: str) -> float:
    return REGISTRY.get_sample_value("pcm_family_searches_total", {"search": kind}) or 0.0


async def test_keyed_family_search_matches_the_range(res: Resources) -> None:
    tenant = "fam"
    # Runs over three months, stored newest first, and a burst of runs in one hour.
    spread = [
        (
            RUN_TEXTS[i % 3].format(d=f"5.{i % 3}", t=f"3{i % 10}:1{i % 7}"),
            T0 + timedelta(days=3 * i),
        )
        for i in range(30)
    ]
    burst_at = T0 + timedelta(days=45, minutes=5)
    burst = [
        (
            RUN_TEXTS[i % 3].format(d="5.0", t=f"29:{10 + i:02d}"),
            burst_at + timedelta(minutes=2 * i),
        )
        for i in range(14)
    ]
    # Two runs half a millisecond apart, after everything else: simultaneous, so neither
    # is the other's family, though their hour leaves them both to the keyed search.
    pair_at = T0 + timedelta(days=120)
    pair = [
        (RUN_TEXTS[1].format(d="5.1", t="31:12"), pair_at),
        (RUN_TEXTS[1].format(d="5.1", t="31:13"), pair_at + timedelta(microseconds=500)),
    ]
    ids = await store(res, tenant, [*reversed(spread), *burst, *pair])
    # A memory stored before payloads had calendar keys, from the middle of the spread:
    # the keys must never leave it out of a later memory's family.
    # (The adapter stamps every write with them: a null patch clears the field instead.)
    legacy = ids[len(spread) // 2]
    (stamped,) = await res.vectors.get(tenant, [legacy])
    created = MemoryRecord.from_payload(stamped.payload).created_at
    assert stamped.payload[time_keys.FIELD] == time_keys.keys(created)
    assert await res.vectors.set_payload(tenant, legacy, {time_keys.FIELD: None})
    (found,) = await res.vectors.get(tenant, [legacy])
    assert found.payload.get(time_keys.FIELD) is None

    judging = Judging(res)
    points = await res.vectors.get(tenant, ids, with_vectors=True)
    keyed0, ranged0 = searches("keyed"), searches("ranged")
    families = await judging.families([(tenant, p) for p in points])
    if res.vectors.capabilities(tenant).cheap_ranges:  # the mirror: the exact search only
        assert searches("keyed") - keyed0 == 0
        assert searches("ranged") - ranged0 == len(points)
    else:
        assert searches("keyed") - keyed0 == len(points)
        # The burst's first memories have more than KEYED_SLACK later neighbours in their
        # own hour: those searches could not prove their family and were asked again. The
        # keys did the work for the rest.
        assert 1 <= searches("ranged") - ranged0 <= len(burst) + 1
    sizes = []
    for point, family in zip(points, families, strict=True):
        assert not isinstance(family, Exception)
        assert [f.id for f in family] == await exact_family(judging, tenant, point)
        ts = float(point.payload["created_ts"])
        assert all(float(f.payload["created_ts"]) < ts for f in family)
        sizes.append(len(family))
    assert max(sizes) == sp.FAMILY_MAX and min(sizes) == 0
    in_families = {f.id for family in families if isinstance(family, list) for f in family}
    assert legacy in in_families
