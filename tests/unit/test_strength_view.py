"""The inspector's strength view against the domain's own strength functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from pcm_common.domain.memory import MemoryRecord, Strength
from pcm_common.domain.strength import DEMOTE_AFTER, DEMOTE_BELOW, decayed
from pcm_inspector.strength_view import crossing, strength_view

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(
    *,
    pinned: bool = False,
    n: int = 0,
    s_ref: float = 0.6,
    last_recalled_at: datetime | None = None,
) -> MemoryRecord:
    return MemoryRecord(
        id="m1",
        tenant="t",
        text="x",
        text_hash="h",
        created_at=T0,
        ingested_at=T0,
        pinned=pinned,
        strength=Strength(s_ref=s_ref, t_ref=T0, n=n, last_recalled_at=last_recalled_at),
    )


def test_the_crossing_is_where_the_decay_reaches_the_threshold() -> None:
    for n in (0, 1, 5):
        at = crossing(0.9, T0, n)
        assert at is not None and at > T0
        assert abs(decayed(0.9, T0, n, at) - DEMOTE_BELOW) < 1e-9
    assert crossing(DEMOTE_BELOW / 2, T0, 0) is None  # already below


def test_the_curve_falls_from_the_last_reinforcement_and_is_projected_after_now() -> None:
    now = T0 + timedelta(days=10)
    view = strength_view(record(n=2), now)
    values = [p["strength"] for p in view["curve"]]
    assert values == sorted(values, reverse=True)
    assert view["curve"][0]["at"] == T0 and values[0] == 0.6
    assert all(p["projected"] == (p["at"] > now) for p in view["curve"])
    assert view["curve"][-1]["at"] == view["crosses_threshold_at"]
    assert abs(view["current"] - decayed(0.6, T0, 2, now)) < 1e-6


def test_demotion_waits_for_ninety_days_without_a_recall() -> None:
    recalled = T0 + timedelta(days=80)
    # Weak early (s_ref just above the threshold), recalled late: the recall decides.
    view = strength_view(record(s_ref=0.06, last_recalled_at=recalled), T0)
    assert view["crosses_threshold_at"] < recalled + DEMOTE_AFTER
    assert view["demotable_at"] == recalled + DEMOTE_AFTER
    assert [e["kind"] for e in view["events"]] == ["created", "recall"]


def test_a_pinned_memory_never_crosses() -> None:
    view = strength_view(record(pinned=True), T0)
    assert view["crosses_threshold_at"] is None and view["demotable_at"] is None
    assert {p["strength"] for p in view["curve"]} == {1.0}


def test_the_past_is_replayed_from_creation_to_the_last_reinforcement() -> None:
    repeat, recall = T0 + timedelta(days=5), T0 + timedelta(days=12)
    st = Strength(s_ref=0.6, t_ref=T0).reinforced(repeat).reinforced(recall, recalled=True)
    rec = record().model_copy(update={"repeats": [repeat], "strength": st})
    view = strength_view(rec, T0 + timedelta(days=20))
    past = view["past"]
    # From the creation at its initial strength to t_ref, where the stored curve starts.
    assert past[0]["at"] == T0 and past[0]["strength"] == 0.6
    assert past[-1]["at"] == st.t_ref == view["curve"][0]["at"]
    assert view["replay"]["unrecorded"] == 0 and abs(view["replay"]["jump"]) < 1e-6
    # The repeat is a step up at one instant: the value before it, then the one after.
    at_repeat = [p["strength"] for p in past if p["at"] == repeat]
    assert len(at_repeat) == 2 and at_repeat[1] > at_repeat[0]
    # Each event is marked at the strength just after it.
    marks = {e["kind"]: e["strength"] for e in view["events"]}
    assert marks["created"] == 0.6
    assert abs(marks["repeat"] - at_repeat[1]) < 1e-6
    assert abs(marks["recall"] - st.s_ref) < 1e-6
    # Between events the replay decays by the law, never rising.
    for a, b in pairwise(past):
        if a["at"] != b["at"]:
            assert b["strength"] <= a["strength"]


def test_a_memory_never_reinforced_has_no_past_and_a_pinned_one_none_drawn() -> None:
    view = strength_view(record(), T0 + timedelta(days=3))
    assert view["past"] == [] and view["replay"]["reinforcements"] == 0
    pinned = strength_view(record(pinned=True), T0)
    assert pinned["past"] == [] and pinned["replay"] is None
