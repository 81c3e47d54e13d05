"""The near-duplicate search filters on the figures' keyword: the twin is the nearest
memory stating the same figures, memories stored before the keyword existed are still
found, and nearer ones of those with other figures do not hide the twin (real Qdrant Edge,
real MiniLM, the ingest service itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcm_common.domain.figures import FIGURES_KEY
from pcm_common.runtime.resources import Resources
from pcm_common.stores.vectors import SearchQuery, VectorPoint
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings
from tests.integration.test_anomaly_flags import res

__all__ = ["res"]  # the fixture, used by name

QUERY = "Ran 5k in 27:10 this morning along the river!"
TWIN = "Ran 5k in 27:10 this morning along the river."  # cos 0.970 to QUERY
# Other figures, each nearer to QUERY than TWIN is (cos 0.991-0.997).
OTHERS = [f"Ran 5k in 27:1{k} this morning along the river!" for k in range(1, 6)]


async def write(svc: IngestService, tenant: str, texts: Sequence[str]) -> list[tuple[str, str]]:
    out = await svc.store(tenant, [MemoryIn(text=t) for t in texts])
    return [(str(r.id), r.status) for r in out]


async def make_legacy(res: Resources, tenant: str, ids: Sequence[str]) -> None:
    """Rewrite the points as they were stored before `figures_key` existed."""
    for p in await res.vectors.get(tenant, list(ids), with_vectors=True):
        assert p.vector is not None and FIGURES_KEY in p.payload
        payload = {k: v for k, v in p.payload.items() if k != FIGURES_KEY}
        await res.vectors.upsert([VectorPoint(p.id, p.vector, payload)])


def counting(res: Resources) -> list[int]:
    """Sizes of the batches of searches asked of the store from now on."""
    sizes: list[int] = []
    inner = res.vectors.search_many

    async def spy(queries: Sequence[SearchQuery], **kw: Any) -> Any:
        sizes.append(len(queries))
        return await inner(queries, **kw)

    res.vectors.search_many = spy  # type: ignore[method-assign]
    return sizes


async def test_the_twin_states_the_same_figures(res: Resources) -> None:
    svc = IngestService(res, IngestSettings())
    [(twin, status)] = await write(svc, "nd1", [TWIN])
    assert status == "created"
    # Nearer memories with other figures are other events; the twin is found past them
    # (the nearest hit alone, as the search once took, would have kept both).
    others = await write(svc, "nd1", OTHERS)
    assert [s for _, s in others] == ["created"] * len(OTHERS)
    [(merged, status)] = await write(svc, "nd1", [QUERY])
    assert (merged, status) == (twin, "merged")
    [(_, status)] = await write(svc, "nd1", ["Ran 5k in 41:30 this morning along the river!"])
    assert status == "created"


async def test_memories_without_the_figures_keyword_are_still_found(res: Resources) -> None:
    svc = IngestService(res, IngestSettings())
    [(twin, _)] = await write(svc, "nd2", [TWIN])
    await make_legacy(res, "nd2", [twin])
    sizes = counting(res)
    [(merged, status)] = await write(svc, "nd2", [QUERY])
    assert (merged, status) == (twin, "merged")
    assert sizes == [1]  # found by the first search


async def test_legacy_hits_with_other_figures_do_not_hide_the_twin(res: Resources) -> None:
    svc = IngestService(res, IngestSettings())
    [(twin, _)] = await write(svc, "nd3", [TWIN])
    others = await write(svc, "nd3", OTHERS)
    await make_legacy(res, "nd3", [i for i, _ in others])
    sizes = counting(res)
    [(merged, status)] = await write(svc, "nd3", [QUERY])
    # The first search's hits were all legacy memories with other figures: asked again
    # of the memories with the same figures' keyword.
    assert (merged, status) == (twin, "merged")
    assert sizes == [1, 1]
