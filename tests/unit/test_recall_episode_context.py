"""Episode context of recall: which seeds are expanded, and that an episode's consolidated
record never rides in as a neighbour (EpisodeContext.seeds / around)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pcm_common.domain.memory import ItemView, MemoryRecord, Source, State, Strength
from pcm_common.stores.vectors import (
    Filter,
    ScoredPoint,
    VectorStore,
    only_fields,
    payload_matches,
)
from pcm_recall.context import EpisodeContext
from pcm_recall.items import context_item
from pcm_recall.ranking import Ranker
from pcm_recall.schemas import ContextItem
from pcm_recall.settings import RecallSettings

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def record(i: int, episode: str = "e1", source: Source = Source.API) -> MemoryRecord:
    return MemoryRecord(
        id=f"m{i}",
        tenant="t",
        text=f"turn {i}",
        text_hash=f"h{i}",
        created_at=T0,  # one session time for every turn, as a replayed conversation has
        ingested_at=T0,
        seq=i,
        strength=Strength(s_ref=0.6, t_ref=T0),
        episode=episode,
        source=source,
    )


class ScrollStore:
    """Only `scroll` (with the store's filter semantics) and `get`, and the port's own
    `scroll_many` and `timelines` over them (the episode context reads with these)."""

    scroll_many = VectorStore.scroll_many
    timelines = VectorStore.timelines

    def __init__(self, recs: list[MemoryRecord]) -> None:
        self.payloads = [r.to_payload() for r in recs]

    async def scroll(
        self, tenant: str, *, flt: Filter | None = None, limit: int = 100, **_: Any
    ) -> tuple[list[ScoredPoint], str | None]:
        pts = [
            ScoredPoint(id=p["id"], score=0.0, payload=p)
            for p in self.payloads
            if flt is None or payload_matches(flt, p)
        ]
        return pts[:limit], None

    async def get(
        self, tenant: str, ids: Sequence[str], *, fields: Sequence[str] | None = None, **_: Any
    ) -> list[ScoredPoint]:
        by_id = {p["id"]: p for p in self.payloads}
        return [
            ScoredPoint(id=i, score=0.0, payload=only_fields(by_id[i], fields))
            for i in ids
            if i in by_id
        ]


def context(recs: list[MemoryRecord], **settings: Any) -> EpisodeContext:
    """Recall's context stage over `recs`."""
    return EpisodeContext(
        type("Res", (), {"vectors": ScrollStore(recs)})(), RecallSettings(**settings)
    )


def ranker(reranker: Any = None, **settings: Any) -> Ranker:
    """Recall's relevance and score stage."""
    return Ranker(RecallSettings(**settings), reranker)


def item(rec: MemoryRecord) -> ContextItem:
    return context_item(rec, score=1.0, relevance=1.0, strength=0.6)


def test_seeds_prefer_linked_memories_then_next_ranked() -> None:
    top = [item(record(i)) for i in range(10)]
    svc = context([], graph_seeds=2)
    # k=10: episode_seeds = 3, then two more.
    assert [c.memory_id for c in svc.seeds(top, 10, {})] == ["m0", "m1", "m2", "m3", "m4"]
    linked = {"m8": 0.9, "m1": 0.5}
    assert [c.memory_id for c in svc.seeds(top, 10, linked)] == ["m0", "m1", "m2", "m8", "m3"]
    assert len(context([], graph_seeds=0).seeds(top, 10, linked)) == 3


async def test_episode_context_skips_the_consolidated_record() -> None:
    turns = [record(i) for i in range(1, 9)]
    whole = record(0, source=Source.CONSOLIDATION)  # same episode and time, sorts first
    svc = context([whole, *turns], episode_neighbours=2, graph_seeds=0)
    seed = item(turns[0])  # m1: its left neighbours would be the record
    got = await svc.around("t", [seed], 10, exclude={"m1"}, visible=Filter(), now=T0)
    assert [c.memory_id for c in got] == ["m2", "m3"]


async def test_episode_context_stays_within_what_the_request_sees() -> None:
    """Two users (or projects) who reuse an episode id do not see each other's turns."""
    mine = [record(i) for i in (1, 3, 5)]
    theirs = [record(i) for i in (2, 4)]
    for r in mine:
        r.user_id = "ana"
    for r in theirs:
        r.user_id = "ben"
    svc = context([*mine, *theirs], episode_neighbours=2, graph_seeds=0)
    seed = item(mine[0])
    ana = Filter(must={"state": ["active"], "user_id": "ana"}, should=[{"scope": "global"}])
    got = await svc.around("t", [seed], 10, exclude={"m1"}, visible=ana, now=T0)
    assert [c.memory_id for c in got] == ["m3", "m5"]


async def test_a_question_in_the_answer_brings_the_memory_after_it() -> None:
    turns = [record(i) for i in range(1, 9)]
    turns[4].text = "Can you share the recipe?"  # m5
    svc = context(turns, episode_neighbours=1, graph_seeds=0, episode_answer_seeds=10)
    top = [item(turns[0]), item(turns[1]), item(turns[2]), item(turns[4])]  # 3 seeds + m5
    got = await svc.around("t", top, 10, exclude={"m1", "m2", "m3", "m5"}, visible=Filter(), now=T0)
    # Seeds m1-m3 bring ±1 (m4); the question m5 brings only the turn after it (m6).
    assert [c.memory_id for c in got] == ["m4", "m6"]
    off = context(turns, episode_neighbours=1, graph_seeds=0, episode_answer_seeds=0)
    got = await off.around("t", top, 10, exclude={"m1", "m2", "m3", "m5"}, visible=Filter(), now=T0)
    assert [c.memory_id for c in got] == ["m4"]


async def test_turns_saved_at_one_instant_keep_their_ingest_order() -> None:
    """Every turn has the same created_at and the store returns them in reverse: the
    neighbours still come by seq (read for the tied turns only)."""
    turns = [record(i) for i in range(8, 0, -1)]
    svc = context(turns, episode_neighbours=1, graph_seeds=0)
    got = await svc.around("t", [item(turns[4])], 10, exclude={"m4"}, visible=Filter(), now=T0)
    assert [c.memory_id for c in got] == ["m3", "m5"]


def test_a_context_item_from_the_light_view_equals_one_from_the_whole_record() -> None:
    """The answer is built from `ItemView`s; it must show what the whole record does."""
    rec = record(3).model_copy(
        update={
            "user_id": "kim",
            "workspace": "w",
            "project": "p",
            "metadata": {"dia_id": "D1:3", "tags": ["a"]},
            "superseded_by": "m9",
            "state": State.SUPERSEDED,
        }
    )
    payload = rec.to_payload()
    whole = context_item(rec, score=0.5, relevance=0.25, strength=0.75)
    light = context_item(ItemView.model_validate(payload), score=0.5, relevance=0.25, strength=0.75)
    assert light == whole
    assert light.model_dump() == whole.model_dump() and light.superseded_by == "m9"


async def test_a_neighbour_shows_its_strength_now_not_at_its_last_reinforcement() -> None:
    """An episode neighbour's strength is decayed to the recall's `now`, as the situational
    items' are (the stored s_ref is its strength at t_ref)."""
    from datetime import timedelta

    from pcm_common.domain.strength import decayed

    turns = [record(i) for i in range(1, 4)]
    svc = context(turns, episode_neighbours=1, graph_seeds=0)
    later = T0 + timedelta(days=30)
    got = await svc.around("t", [item(turns[1])], 10, exclude={"m2"}, visible=Filter(), now=later)
    assert [c.memory_id for c in got] == ["m1", "m3"]
    expected = round(decayed(0.6, T0, 0, later, False), 6)
    assert all(c.strength == expected < 0.6 for c in got)
