"""Qdrant Edge's index built in a child process on a copy
(`pcm_common.stores.qdrant.edge.optimize`): writes made during the build reach the swapped-in
shard, reads go on meanwhile, a cut swap is recovered, and a failed child falls back to the
in-process build."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
import qdrant_edge as qe

from pcm_common.stores.qdrant.common import DENSE
from pcm_common.stores.qdrant.edge import optimize as edge_optimize
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.vectors import SearchQuery
from tests.integration.test_vector_stores import DIM, make_point

pytestmark = pytest.mark.slow


def leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


async def test_writes_during_the_child_build_reach_the_new_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "shard"
    store = EdgeVectorStore(path, dim=DIM, optimize_after=10**9, optimize_in_child=True)
    await store.ensure_collection()
    old = [make_point("A", f"note {i}") for i in range(600)]
    await store.upsert(old)
    loop = asyncio.get_running_loop()
    during: dict[str, Any] = {}
    real = edge_optimize.optimize_copy

    def build(copy: Path, *args: Any) -> None:
        # The store takes reads and writes while the copy waits for its build.
        async def meanwhile() -> None:
            during["new"] = [make_point("A", f"later {i}") for i in range(40)]
            await store.upsert(during["new"])
            await store.set_payload_many("A", [(p.id, {"importance": "high"}) for p in old[:10]])
            during["deleted"] = await store.delete("A", [p.id for p in old[10:15]])
            during["count"] = await store.count("A")

        during["indexing"] = store.capabilities().indexing
        asyncio.run_coroutine_threadsafe(meanwhile(), loop).result(60)
        real(copy, *args)

    monkeypatch.setattr(edge_optimize, "optimize_copy", build)
    try:
        assert not store.capabilities().indexing
        assert await store.optimize() is True
        assert during["indexing"] and not store.capabilities().indexing
        assert during["deleted"] == 5 and during["count"] == 600 + 40 - 5
        assert await store.count("A") == 600 + 40 - 5
        got = {p.id: p.payload for p in await store.get("A", [p.id for p in old[:15]])}
        assert set(got) == {p.id for p in old[:10]}
        assert all(pl["importance"] == "high" for pl in got.values())
        hits = await store.search("A", during["new"][0].vector, limit=1)
        assert hits[0].id == during["new"][0].id
        assert leftovers(path) == []
    finally:
        await store.close()
    again = EdgeVectorStore(path, dim=DIM, optimize_in_child=True)
    await again.ensure_collection()
    try:
        assert await again.count("A") == 635
    finally:
        await again.close()


async def test_a_swap_cut_between_its_renames_is_undone(tmp_path: Path) -> None:
    path = tmp_path / "shard"
    store = EdgeVectorStore(path, dim=DIM)
    await store.ensure_collection()
    await store.upsert([make_point("A") for _ in range(30)])
    await store.close()
    # The process died after moving the original aside, before the copy took its place.
    path.rename(edge_optimize.sibling(path, edge_optimize.OLD_SUFFIX))
    edge_optimize.sibling(path, edge_optimize.COPY_SUFFIX).mkdir()
    again = EdgeVectorStore(path, dim=DIM, optimize_in_child=True)
    await again.ensure_collection()
    try:
        assert await again.count("A") == 30
        assert leftovers(path) == [path.name + edge_optimize.COPY_SUFFIX]
        # The next build replaces the stale copy and leaves nothing behind.
        assert await again.optimize() is True
        assert leftovers(path) == []
        assert await again.count("A") == 30
    finally:
        await again.close()


async def test_a_failed_child_falls_back_to_building_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(copy: Path, *args: Any) -> None:
        raise subprocess.CalledProcessError(1, ["child"])

    monkeypatch.setattr(edge_optimize, "optimize_copy", broken)
    path = tmp_path / "shard"
    store = EdgeVectorStore(path, dim=DIM, optimize_after=10**9, optimize_in_child=True)
    await store.ensure_collection()
    try:
        await store.upsert([make_point("A") for _ in range(50)])
        assert await store.optimize() in (True, False)  # Edge's own answer
        await store.upsert([make_point("A") for _ in range(5)])
        assert await store.count("A") == 55
        assert leftovers(path) == []
    finally:
        await store.close()


async def test_the_default_builds_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unexpected(copy: Path, *args: Any) -> None:
        raise AssertionError("no child build unless asked for")

    monkeypatch.setattr(edge_optimize, "optimize_copy", unexpected)
    store = EdgeVectorStore(tmp_path / "shard", dim=DIM, optimize_after=10**9)
    await store.ensure_collection()
    try:
        await store.upsert([make_point("A") for _ in range(20)])
        assert await store.optimize() in (True, False)
        assert await store.count("A") == 20
    finally:
        await store.close()


async def test_a_write_that_failed_during_the_build_is_forgotten_at_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that landed in the live shard but failed is not in the journal, so the
    swapped-in copy lacks it: the mirror (and the cache, the owners) learnt it from the
    live shard and must forget it at the swap."""
    store = EdgeVectorStore(
        tmp_path / "shard",
        dim=DIM,
        optimize_after=10**9,
        optimize_in_child=True,
        dense_mirror=10_000,
    )
    await store.ensure_collection()
    await store.upsert([make_point("A", f"note {i}") for i in range(200)])
    lost = make_point("A", "half written")
    nearest = SearchQuery("A", lost.vector, limit=1)
    loop = asyncio.get_running_loop()
    seen: dict[str, Any] = {}
    real = edge_optimize.optimize_copy

    def half(shard: Any) -> None:
        point = qe.Point(lost.id, {DENSE: list(lost.vector)}, dict(lost.payload))
        shard.update(qe.UpdateOperation.upsert_points([point]))
        raise RuntimeError("cut after the engine took it")

    def build(copy: Path, *args: Any) -> None:
        with pytest.raises(RuntimeError):
            store._write(half, "test")
        # Reloaded from the live shard, which holds the half-written point.
        found = asyncio.run_coroutine_threadsafe(store.search_many([nearest], fields=()), loop)
        seen["before"] = [h.id for h in found.result(60)[0]]
        real(copy, *args)

    monkeypatch.setattr(edge_optimize, "optimize_copy", build)
    try:
        assert await store.optimize() is True
        assert seen["before"] == [lost.id]
        (after,) = await store.search_many([nearest], fields=())
        assert after and after[0].id != lost.id
        assert await store.count("A") == 200
        assert not await store.get("A", [lost.id])
    finally:
        await store.close()
