"""Demoted (archived) memories on the read path: which cue reactivates one
(Ranker.reachable) and whether it comes back next to a recalled seed
(EpisodeContext.archived_neighbours / around)."""

from __future__ import annotations

import pytest

from pcm_common.domain.memory import MemoryRecord, State
from pcm_common.stores.vectors import ScoredPoint
from pcm_recall.candidates import visibility
from pcm_recall.schemas import RecallIn
from tests.unit.test_recall_episode_context import T0, context, item, ranker, record


def archived_turns() -> list[MemoryRecord]:
    """m1..m5 of one episode, m2 and m3 archived (demoted)."""
    turns = [record(i) for i in range(1, 6)]
    for r in turns[1:3]:
        r.state = State.ARCHIVED
    return turns


@pytest.mark.parametrize(
    ("setting", "include_archived", "expected"),
    [(True, False, True), (False, False, False), (False, True, True), (True, True, True)],
)
def test_archived_neighbours_setting(setting: bool, include_archived: bool, expected: bool) -> None:
    svc = context([], archived_episode_neighbours=setting)
    req = RecallIn(query="q", include_archived=include_archived)
    assert svc.archived_neighbours(req) is expected


async def test_recalled_seed_brings_back_its_archived_neighbours() -> None:
    turns = archived_turns()
    svc = context(turns, episode_neighbours=2, graph_seeds=0)
    seed = item(turns[0])
    req = RecallIn(query="q")
    with_archived = visibility(req, include_archived=True)
    got = await svc.around("t", [seed], 10, exclude={"m1"}, visible=with_archived, now=T0)
    assert [c.memory_id for c in got] == ["m2", "m3"]
    # Active only: the archived turns are skipped and the next active ones stand in.
    active = visibility(req, include_archived=False)
    got = await svc.around("t", [seed], 10, exclude={"m1"}, visible=active, now=T0)
    assert [c.memory_id for c in got] == ["m4", "m5"]


def test_superseded_neighbours_never_come_back() -> None:
    flt = visibility(RecallIn(query="q"), include_archived=True)
    assert State.SUPERSEDED.value not in flt.must["state"]


def point(state: str, cos: float) -> ScoredPoint:
    return ScoredPoint(id="m", score=cos, payload={"state": state})


def test_only_a_strong_cue_reaches_an_archived_memory() -> None:
    svc = ranker(archived_recall_min_cos=0.4, archived_recall_min_rel=0.55)
    req = RecallIn(query="q")
    assert svc.reachable(point("active", 0.31), 0.1, req)  # active: the floor decides
    assert not svc.reachable(point("archived", 0.38), 0.3, req)  # weak cue
    assert svc.reachable(point("archived", 0.41), 0.3, req)  # close
    assert svc.reachable(point("archived", 0.3), 0.55, req)  # best match of one list
    assert svc.reachable(point("archived", 0.3), 0.1, RecallIn(query="q", include_archived=True))
