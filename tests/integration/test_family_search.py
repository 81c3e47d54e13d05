"""The judge's family search by calendar keys finds exactly what the `created_ts` range
finds, on a real Qdrant Edge shard with real MiniLM vectors, memories stored out of time
order, later memories in the same hour, and a payload written before `time_keys` existed."""

from __future__ import annotations

from datetime import timedelta

from prometheus_client import REGISTRY

from pcm_common.domain import surprisal as sp
from pcm_common.resources import Resources
from pcm_common.stores.vectors import ScoredPoint, VectorPoint
from pcm_sweeper.judging import Judging
from tests.integration.test_anomaly_flags import RUN_TEXTS, T0, res, store

__all__ = ["res"]  # the fixture, used by name


async def exact_family(judging: Judging, tenant: str, point: ScoredPoint) -> list[str]:
    """The family as the range search alone finds it."""
    ts = float(point.payload["created_ts"])
    (hits,) = await judging.res.vectors.search_many(
        [judging._family_query((tenant, point), judging.config.family_max, ts)]
    )
    return sp.select_family(
        (
            sp.Candidate(h.id, h.score, float(h.payload["created_ts"]))
            for h in hits
            if h.id != point.id
        ),
        ts,
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
    ids = await store(res, tenant, list(reversed(spread)) + burst)
    # A memory stored before payloads had calendar keys: later than the burst's start.
    legacy = ids[-1]
    found = await res.vectors.get(tenant, [legacy])
    payload = {k: v for k, v in found[0].payload.items() if k != "time_keys"}
    await res.vectors.delete(tenant, [legacy])
    (vec,) = await res.embedder.embed([str(payload["text"])])
    await res.vectors.upsert([VectorPoint(legacy, vec, payload)])

    judging = Judging(res)
    points = await res.vectors.get(tenant, ids, with_vectors=True)
    keyed0, ranged0 = searches("keyed"), searches("ranged")
    families = await judging.families([(tenant, p) for p in points])
    assert searches("keyed") - keyed0 == len(points)
    # The burst's first memories have more than FAMILY_SLACK later neighbours in their
    # own hour: some searches could not prove their family and were asked again.
    assert searches("ranged") - ranged0 >= 1
    sizes = []
    for point, family in zip(points, families, strict=True):
        assert not isinstance(family, Exception)
        assert [f.id for f in family] == await exact_family(judging, tenant, point)
        ts = float(point.payload["created_ts"])
        assert all(float(f.payload["created_ts"]) < ts for f in family)
        sizes.append(len(family))
    assert max(sizes) == sp.FAMILY_MAX and min(sizes) == 0
