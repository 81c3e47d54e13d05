"""Which short-term memories form an episode record, and what the record looks like."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.consolidation import (
    GroupKey,
    Member,
    is_candidate,
    is_current,
    ordered,
    qualifies,
    record_id,
    render,
    source_ids,
)

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def member(minutes: int, text: str = "", mid: str | None = None) -> Member:
    return Member(
        id=mid or f"m{minutes:03d}",
        text=text or f"note {minutes}",
        created_at=T0 + timedelta(minutes=minutes),
    )


def candidate(
    source: str = "api", state: str = "active", pinned: bool = False, episode: str | None = "s1"
) -> bool:
    return is_candidate(source=source, state=state, pinned=pinned, episode=episode)


def test_candidates_are_ordinary_memories_of_an_episode() -> None:
    assert candidate()
    assert candidate(state="archived")  # demoted evidence stays part of its episode
    assert not candidate(episode=None)
    assert not candidate(episode="")
    assert not candidate(source="consolidation")
    assert not candidate(state="superseded")
    assert not candidate(pinned=True)


def test_qualifies_with_three_members_once_the_episode_is_quiet() -> None:
    members = [member(0), member(10), member(20)]
    settled = T0 + timedelta(minutes=20, hours=6)
    assert qualifies(members, settled)
    assert not qualifies(members, settled - timedelta(seconds=1))  # still being written
    assert not qualifies(members[:2], settled + timedelta(days=30))  # too small
    assert qualifies(members[:2], settled, min_members=2)


def test_render_dated_lines_in_time_order() -> None:
    members = [member(30, "Then we hiked."), member(0, "We arrived."), member(15, "Lunch.")]
    assert render(members) == (
        "[2023-05-08 13:56] We arrived.\n"
        "[2023-05-08 14:11] Lunch.\n"
        "[2023-05-08 14:26] Then we hiked."
    )
    assert source_ids(members) == ["m000", "m015", "m030"]


def test_record_id_is_deterministic_per_tenant_episode_and_visibility() -> None:
    key = GroupKey(episode="session-1")
    rid = record_id("t1", key)
    assert rid == record_id("t1", GroupKey(episode="session-1"))
    uuid.UUID(rid)  # a valid point id
    assert rid != record_id("t2", key)
    assert rid != record_id("t1", GroupKey(episode="session-2"))
    assert rid != record_id("t1", GroupKey(episode="session-1", scope="project", project="p"))


def test_is_current_detects_growth_and_edits() -> None:
    members = [member(0), member(10), member(20)]
    text, ids = render(members), source_ids(members)
    assert is_current(ids, text, members)
    assert not is_current(None, text, members)
    grown = [*members, member(30)]
    assert not is_current(ids, text, grown)
    edited = [member(0, "changed"), member(10), member(20)]
    assert not is_current(ids, text, edited)


@given(st.permutations(list(range(8))))
def test_order_is_independent_of_input_order(perm: list[int]) -> None:
    base = [member(m) for m in range(8)]
    shuffled = [base[i] for i in perm]
    assert render(shuffled) == render(base)
    assert ordered(shuffled) == base


def test_ties_in_time_break_by_id() -> None:
    a = Member(id="b", text="second", created_at=T0)
    b = Member(id="a", text="first", created_at=T0)
    assert [m.id for m in ordered([a, b])] == ["a", "b"]
