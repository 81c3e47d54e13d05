"""`Owners`: the Edge adapter's record of who owns each point."""

from __future__ import annotations

from pcm_common.stores.qdrant.edge.owners import Owners


def test_split_tells_mine_unknown_and_others() -> None:
    o = Owners()
    o.remember([("p1", "A"), ("p2", "B")])
    assert o.split("A", ["p1", "p2", "p3"]) == ({"p1"}, ["p3"])
    o.remember([("p2", "A")])  # written again for another tenant
    assert o.split("A", ["p2"]) == ({"p2"}, [])
    o.forget(["p1", "nope"])
    assert o.split("A", ["p1"]) == (set(), ["p1"])


def test_a_full_record_starts_again_and_capacity_0_keeps_nothing() -> None:
    o = Owners(capacity=2)
    o.remember([("p1", "A"), ("p2", "A")])
    o.remember([("p2", "A")])  # known already: nothing dropped
    assert len(o) == 2
    o.remember([("p3", "A")])
    assert len(o) == 1 and o.split("A", ["p1", "p3"]) == ({"p3"}, ["p1"])
    off = Owners(capacity=0)
    off.remember([("p1", "A")])
    assert len(off) == 0 and off.split("A", ["p1"]) == (set(), ["p1"])
