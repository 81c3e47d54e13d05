"""Spreading activation at retrieval (`pcm_common.domain.association`)."""

from __future__ import annotations

import pytest

from pcm_common.domain.association import (
    EPISODE,
    GRAPH,
    SIMILAR,
    Edge,
    associations,
    frontier,
    seed_energies,
    seeded,
    spread,
    step,
)

# a - b - c - d - e - f - g - h: a chain of similarity edges from seed a.
CHAIN = {x: [Edge(y, SIMILAR)] for x, y in zip("abcdefg", "bcdefgh", strict=True)}


def test_energy_falls_a_fifth_per_hop_and_stops_below_the_floor() -> None:
    got = spread({"a": 1.0}, CHAIN, max_hops=10)
    assert {m: round(r.energy, 4) for m, r in got.items()} == {
        "a": 1.0,
        "b": 0.8,
        "c": 0.64,
        "d": 0.512,
        "e": 0.4096,
        "f": 0.3277,
    }
    assert [got[m].hops for m in "abcdef"] == [0, 1, 2, 3, 4, 5]
    assert got["f"].source == "e" and got["b"].via == SIMILAR and got["a"].via == "seed"


def test_max_hops_bounds_the_reach() -> None:
    assert set(spread({"a": 1.0}, CHAIN, max_hops=2)) == {"a", "b", "c"}


def test_a_weaker_seed_reaches_less_far() -> None:
    # Half the best score: 0.5 -> 0.4 -> 0.32 -> (0.256 stops).
    energies = seed_energies([("x", 0.8), ("a", 0.4)])
    assert energies == {"x": 1.0, "a": 0.5}
    got = spread(energies, CHAIN, max_hops=10)
    assert set(got) == {"x", "a", "b", "c"}


def test_the_strongest_path_wins() -> None:
    edges = {
        "a": [Edge("b", SIMILAR), Edge("c", EPISODE, weight=0.5)],
        "b": [Edge("c", GRAPH)],
    }
    got = spread({"a": 1.0}, edges, min_energy=0.1)
    # Direct: 1.0 x 0.8 x 0.5 = 0.4; through b: 0.8 x 0.8 = 0.64.
    assert got["c"].energy == pytest.approx(0.64)
    assert (got["c"].via, got["c"].source, got["c"].hops) == (GRAPH, "b", 2)


def test_seeds_keep_their_own_energy_and_never_feed_themselves() -> None:
    edges = {"a": [Edge("a", SIMILAR), Edge("b", SIMILAR)], "b": [Edge("a", EPISODE)]}
    got = spread({"a": 1.0, "b": 0.9}, edges)
    assert got["a"].energy == 1.0 and got["a"].hops == 0
    assert got["b"].energy == 0.9 and got["b"].hops == 0  # 0.8 from a is less


def test_frontier_takes_the_most_energetic_unexpanded_first() -> None:
    reached = seeded({"a": 1.0, "b": 0.9, "c": 0.35, "d": 0.95})
    assert frontier(reached, {"d"}, limit=2) == ["a", "b"]
    # c's next hop would bring 0.28 < 0.3: not worth reading its edges.
    assert frontier(reached, set()) == ["a", "d", "b"]


def test_step_ignores_unknown_sources_and_weak_edges() -> None:
    reached = seeded({"a": 1.0})
    out = step(reached, ["a", "zz"], {"a": [Edge("b", SIMILAR, 0.3), Edge("c", SIMILAR, 0.0)]})
    assert set(out) == {"a"}  # 0.24 < 0.3; weight 0 is no edge


def test_associations_leave_out_what_is_shown() -> None:
    got = spread({"a": 1.0}, CHAIN, max_hops=10)
    picked = associations(got, shown={"a", "b"}, limit=3)
    assert [r.memory_id for r in picked] == ["c", "d", "e"]
    assert associations(got, shown=set(), limit=0) == []


def test_no_seeds_reach_nothing() -> None:
    assert seed_energies([]) == {}
    assert spread({}, CHAIN) == {}
