"""Qdrant Edge's adapter with the dense mirror (`pcm_common.stores.qdrant.edge.dense_mirror`)
answers batch searches as the engine does, without asking the engine.

A store with the mirror, one whose mirror is too small for the tenants (so they stay with
the engine) and one without it get the same random upserts (a point may be written again,
for another tenant), payload writes of mirrored fields and deletes, and a reopen half way
(the mirror is then loaded from the engine); their batch searches with the judge's,
the near-duplicate lookup's and the spreading activation's kinds of filter must agree."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from prometheus_client import REGISTRY

from pcm_common.domain.figures import FIGURES_KEY
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import Filter, SearchQuery, VectorPoint

DIM = 8
TENANTS = ("A", "B")
FIELDS = ("created_ts", "state", "text")


def _point(rng: random.Random, pid: str) -> VectorPoint:
    payload: dict[str, Any] = {
        "tenant": rng.choice(TENANTS),
        "scope": rng.choice(["global", "project"]),
        "project": rng.choice(["", "p1"]),
        "state": rng.choice(["active", "active", "superseded"]),
        "source": rng.choice(["api", "consolidation"]),
        "user_id": rng.choice([None, "u1"]),
        "created_ts": rng.uniform(0, 100),
        FIGURES_KEY: rng.choice([None, "5k|27:10"]),
        "text": f"t{rng.randint(0, 9)}",
    }
    return VectorPoint(pid, [rng.gauss(0, 1) for _ in range(DIM)], payload)


def _queries(rng: random.Random) -> list[SearchQuery]:
    out = []
    for _ in range(12):
        kind = rng.choice(["family", "twin", "spread"])
        if kind == "family":
            flt = Filter(
                must={"scope": rng.choice(["global", "project"])},
                must_not={"state": "superseded", "source": "consolidation"},
                ranges={"created_ts": (None, rng.uniform(0, 100))},
            )
        elif kind == "twin":
            flt = Filter(
                must={"state": "active", "scope": "global", "project": "", "user_id": None},
                should=[{FIGURES_KEY: "5k|27:10"}, {FIGURES_KEY: None}],
            )
        else:
            flt = Filter(must={"state": "active"})
        vector = [rng.gauss(0, 1) for _ in range(DIM)]
        limit = rng.choice([1, 5, 14])
        min_score = rng.choice([None, 0.2])
        out.append(SearchQuery(rng.choice(TENANTS), vector, limit, flt, min_score=min_score))
    return out


def _engine_searches() -> float:
    return (
        REGISTRY.get_sample_value(
            "pcm_store_engine_calls_total", {"op": "search_many:query_batch", "caller": "http"}
        )
        or 0.0
    )


def _open(path: Path, mirror: int) -> EdgeVectorStore:
    return EdgeVectorStore(path, dim=DIM, dense_mirror=mirror)


async def test_mirrored_searches_match_the_engines(tmp_path: Path) -> None:
    rng = random.Random(3)
    sizes = {"full": 100_000, "small": 5, "none": 0}
    stores = {name: _open(tmp_path / name, size) for name, size in sizes.items()}
    ids: list[str] = []
    for step in range(40):
        if step == 20:  # reopen: the mirror starts empty and loads from the engine
            for name, s in stores.items():
                await s.close()
                stores[name] = _open(tmp_path / name, sizes[name])
        points = []
        for _ in range(10):
            pid = rng.choice(ids) if ids and rng.random() < 0.2 else str(uuid.uuid4())
            ids.append(pid)
            points.append(_point(rng, pid))
        for s in stores.values():
            await s.upsert(points)
        if step % 3 == 1:
            tenant, victims = rng.choice(TENANTS), rng.sample(ids, 4)
            assert len({await s.delete(tenant, victims) for s in stores.values()}) == 1
        if step % 4 == 2:
            tenant, chosen = rng.choice(TENANTS), rng.sample(ids, 6)
            patches = [(i, {"state": rng.choice(["active", "superseded"])}) for i in chosen]
            assert (
                len({tuple(await s.set_payload_many(tenant, patches)) for s in stores.values()})
                == 1
            )
        queries = _queries(rng)
        fields = rng.choice([None, (), FIELDS])
        answers = {name: await s.search_many(queries, fields=fields) for name, s in stores.items()}
        for full, small, none in zip(
            answers["full"], answers["small"], answers["none"], strict=True
        ):
            for other in (small, none):
                assert [p.id for p in full] == [p.id for p in other]
                assert np.allclose([p.score for p in full], [p.score for p in other], atol=1e-5)
                assert [p.payload for p in full] == [p.payload for p in other]
    cheap = {name: s.capabilities("A").cheap_ranges for name, s in stores.items()}
    assert cheap["full"] and not cheap["none"]
    assert not cheap["small"]  # too many points: the engine's
    assert len(stores["full"]._mirror) > 0 and len(stores["small"]._mirror) == 0
    await stores["full"].search_many(_queries(rng), fields=())
    assert REGISTRY.get_sample_value("pcm_store_mirror_points") == len(stores["full"]._mirror)

    # Mirrored: the engine is not searched; the mirror's payload reads are all it is asked.
    before = _engine_searches()
    await stores["full"].search_many(_queries(rng), fields=FIELDS)
    assert _engine_searches() == before
    await stores["none"].search_many(_queries(rng), fields=FIELDS)
    assert _engine_searches() == before + 1
    for s in stores.values():
        await s.close()
