"""The payload cache's own rules: LRU bound, copies for readers, and no stale fill."""

from __future__ import annotations

from typing import Any

from pcm_common.stores.qdrant.edge.payload_cache import PayloadCache


def _read(cache: PayloadCache, ids: list[str], engine: dict[str, dict[str, Any]]) -> dict:
    """A read as the adapter makes it: cached payloads, the misses from `engine`."""
    found, pending = cache.lookup(ids)
    fetched = {i: dict(engine[i]) for i in pending.ids if i in engine}
    cache.fill(pending, fetched)
    return {**found, **{i: dict(p) for i, p in fetched.items()}}


def test_reads_fill_and_the_least_recently_used_goes_first() -> None:
    engine = {"a": {"n": 1}, "b": {"n": 2}, "c": {"n": 3}}
    cache = PayloadCache(2)
    assert _read(cache, ["a", "b"], engine) == {"a": {"n": 1}, "b": {"n": 2}}
    assert (cache.hits, cache.misses) == (0, 2)
    _read(cache, ["a"], engine)  # a is now the most recently used
    _read(cache, ["c"], engine)  # evicts b
    found, pending = cache.lookup(["a", "b", "c"])
    cache.fill(pending, {})
    assert found == {"a": {"n": 1}, "c": {"n": 3}} and pending.ids == {"b"}
    assert len(cache) == 2


def test_readers_get_copies() -> None:
    cache = PayloadCache(10)
    _read(cache, ["a"], {"a": {"t": [1, 2]}})
    found, _ = cache.lookup(["a"])
    found["a"]["t"] = "changed"
    again, _ = cache.lookup(["a"])
    assert again["a"] == {"t": [1, 2]}


def test_a_written_point_is_read_from_the_engine_again() -> None:
    engine = {"a": {"n": 1}}
    cache = PayloadCache(10)
    _read(cache, ["a"], engine)
    engine["a"] = {"n": 2}
    cache.drop(["a"])
    assert _read(cache, ["a"], engine) == {"a": {"n": 2}}
    assert _read(cache, ["a"], engine) == {"a": {"n": 2}} and cache.hits == 1


def test_a_write_between_lookup_and_fill_keeps_the_read_out() -> None:
    for write, b_kept in (
        (lambda c: c.drop(["a"]), True),
        (lambda c: c.clear(), False),  # after a failed write: nothing read before is kept
    ):
        cache = PayloadCache(10)
        _, pending = cache.lookup(["a", "b"])
        write(cache)
        cache.fill(pending, {"a": {"n": 1}, "b": {"n": 1}})  # read before the write
        found, _ = cache.lookup(["a", "b"])
        assert "a" not in found
        assert ("b" in found) is b_kept


def test_fill_keeps_only_the_misses_it_registered_and_capacity_zero_keeps_nothing() -> None:
    cache = PayloadCache(10)
    _read(cache, ["a"], {"a": {"n": 1}})
    _, pending = cache.lookup(["a", "b"])
    cache.fill(pending, {"a": {"n": 0}, "b": {"n": 2}, "c": {"n": 3}})
    found, _ = cache.lookup(["a", "b", "c"])
    assert found == {"a": {"n": 1}, "b": {"n": 2}}
    off = PayloadCache(0)
    assert _read(off, ["a"], {"a": {"n": 1}}) == {"a": {"n": 1}}
    assert not off.enabled and len(off) == 0


def test_entries_of_some_fields_serve_reads_of_those_fields_only() -> None:
    cache = PayloadCache(10)
    _, pending = cache.lookup(["a"], ["n", "t"])
    cache.fill(pending, {"a": {"n": 1}}, ["n", "t"])  # the point has no `t`
    found, pending = cache.lookup(["a"], ["t"])
    assert found == {"a": {}} and not pending.ids  # a missing field stays missing
    found, pending = cache.lookup(["a"], ["n", "x"])
    assert found == {} and pending.ids == {"a"}
    cache.fill(pending, {"a": {"n": 1, "x": 2}}, ["n", "x"])  # replaces the narrower entry
    assert cache.lookup(["a"], ["x"])[0] == {"a": {"x": 2}}
    found, pending = cache.lookup(["a"])  # a whole read is never served by a part
    assert found == {} and pending.ids == {"a"}
    cache.fill(pending, {"a": {"n": 1, "x": 2, "y": 3}})
    # A part read by a reader that missed before the whole one was kept does not replace it.
    _, late = cache.lookup(["b"], ["n"])
    _, pending = cache.lookup(["b"])
    cache.fill(pending, {"b": {"n": 5, "z": 6}})
    cache.fill(late, {"b": {"n": 5}}, ["n"])
    assert cache.lookup(["b"])[0] == {"b": {"n": 5, "z": 6}}
    assert cache.lookup(["a"], ["y"])[0] == {"a": {"y": 3}}
    cache.drop(["a"])
    assert cache.lookup(["a"], ["y"])[0] == {}
