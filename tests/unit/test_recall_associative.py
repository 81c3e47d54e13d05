"""Associative recall on the in-memory doubles (`mode: "associative"`): what the spreading
adds, what it leaves as it was, and the prompt section."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from pcm_common.domain.clock import utcnow
from pcm_ingest.schemas import MemoryIn
from pcm_recall.prompt import ASSOCIATIONS
from pcm_recall.schemas import RecallIn
from tests.unit.test_recall_service import Pipeline, tenant, world

__all__ = ["world"]

TURNS = [
    "Nadia adopted a greyhound named Pixel from the shelter.",
    "We spent the morning fixing the garden fence.",
    "The weather turned cold after lunch.",
    "My cousin called about the wedding seating plan.",
    "The bakery on the corner closed for renovations.",
    "Pixel sleeps on the blue sofa every afternoon.",
]


async def _episode(w: Pipeline, t: str, **owner: str) -> list[str]:
    start = utcnow() - timedelta(hours=2)
    return await w.write(
        t,
        *(
            MemoryIn(text=x, episode="ep-1", created_at=start + timedelta(minutes=i), **owner)
            for i, x in enumerate(TURNS)
        ),
    )


async def test_associative_reaches_past_the_episode_context(world: Pipeline) -> None:
    t = tenant()
    ids = await _episode(world, t)
    focused = await world.ask(t, "Which dog did Nadia adopt from the shelter?", k=1)
    assoc = await world.ask(
        t, "Which dog did Nadia adopt from the shelter?", k=1, mode="associative"
    )
    shown = {c.memory_id for c in [*focused.situational_context, *focused.episode_context]}
    assert focused.associations == [] and ASSOCIATIONS not in focused.prompt
    assert ids[0] in shown and ids[5] not in shown
    # The focused part of the answer is the same in both modes.
    assert [c.memory_id for c in assoc.situational_context] == [
        c.memory_id for c in focused.situational_context
    ]
    assert assoc.prompt.startswith(focused.prompt)
    reached = {a.memory_id: a for a in assoc.associations}
    assert not shown & set(reached)
    assert ids[4] in reached and reached[ids[4]].via == "episode"
    assert 0.3 <= reached[ids[4]].energy <= 0.8
    assert f"{ASSOCIATIONS}\n" in assoc.prompt and TURNS[4] in assoc.prompt


async def test_associations_stay_with_their_user(world: Pipeline) -> None:
    t = tenant()
    await _episode(world, t, user_id="ann")
    # Bob's memories in the same episode id, next to Ann's in time.
    start = utcnow() - timedelta(hours=2)
    bob = await world.write(
        t,
        *(
            MemoryIn(
                text=f"Bob's private note {i} about Pixel.",
                episode="ep-1",
                user_id="bob",
                created_at=start + timedelta(minutes=i, seconds=30),
            )
            for i in range(6)
        ),
    )
    out = await world.ask(
        t, "Which dog did Nadia adopt from the shelter?", k=1, mode="associative", user_id="ann"
    )
    assert out.associations
    assert not {a.memory_id for a in out.associations} & set(bob)


async def test_associative_with_nothing_found_says_none(world: Pipeline) -> None:
    out = await world.ask(tenant(), "anything at all", mode="associative")
    assert out.associations == [] and out.prompt.endswith(f"{ASSOCIATIONS}\n- none")


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValidationError):
        RecallIn(query="x", mode="dreamy")  # type: ignore[arg-type]
