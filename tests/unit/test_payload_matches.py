"""Filter semantics in process (`payload_matches`) and the asker slot's precedence."""

from __future__ import annotations

from pcm_common.stores.vectors import Filter, payload_matches
from pcm_recall.pinned import precedence


def test_payload_matches_visibility() -> None:
    flt = Filter(
        must={"state": ["active"], "user_id": "u1"},
        should=[{"scope": "global"}, {"scope": "project", "project": "p"}],
        ranges={"created_ts": (0.0, None)},
    )
    base = {"state": "active", "user_id": "u1", "scope": "global", "created_ts": 5.0}
    assert payload_matches(flt, base)
    assert not payload_matches(flt, {**base, "state": "archived"})
    assert not payload_matches(flt, {**base, "user_id": "u2"})
    assert payload_matches(flt, {**base, "scope": "project", "project": "p"})
    assert not payload_matches(flt, {**base, "scope": "project", "project": "other"})
    assert not payload_matches(flt, {**base, "created_ts": -1.0})
    assert payload_matches(Filter(must={"graph.extracted": True}), {"graph": {"extracted": True}})


def test_payload_matches_list_fields_like_qdrant() -> None:
    # A list in the payload matches when any of its values does (time_keys, family_ids).
    keys = {"time_keys": ["y2024", "m2024-03"], "tags": []}
    assert payload_matches(Filter(must={"time_keys": "y2024"}), keys)
    assert payload_matches(Filter(must={"time_keys": ["m2024-02", "m2024-03"]}), keys)
    assert not payload_matches(Filter(must_not={"time_keys": ["y2025", "m2024-03"]}), keys)
    assert payload_matches(Filter(must_not={"time_keys": []}), keys)
    assert payload_matches(Filter(must={"tags": None, "missing": None}), keys)
    assert not payload_matches(Filter(must={"time_keys": None}), keys)


def test_precedence_most_specific_then_important_then_newest() -> None:
    pins = [
        {"id": "g-old", "scope": "global", "importance": "normal", "created_ts": 1.0},
        {"id": "g-new", "scope": "global", "importance": "normal", "created_ts": 2.0},
        {"id": "g-high", "scope": "global", "importance": "high", "created_ts": 0.5},
        {"id": "w", "scope": "workspace", "importance": "low", "created_ts": 0.1},
        {"id": "p", "scope": "project", "importance": "low", "created_ts": 0.1},
    ]
    ordered = sorted(pins, key=precedence)
    assert [p["id"] for p in ordered] == ["p", "w", "g-high", "g-new", "g-old"]
    # Equal on every field: the id decides, so the slot never flips between calls.
    twins = [{"id": "b", "scope": "global"}, {"id": "a", "scope": "global"}]
    assert [p["id"] for p in sorted(twins, key=precedence)] == ["a", "b"]
