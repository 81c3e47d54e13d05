"""What becomes of a distilled fact when memories it came from are deleted
(`pcm_common.domain.fact_sources`)."""

from __future__ import annotations

from pcm_common.domain.fact_sources import Action, Fate, after_deletion, dated_alone


def test_a_fact_none_of_whose_sources_went_is_kept_as_it_is() -> None:
    assert after_deletion(["a", "b"], {"c"}) == Fate(Action.KEEP, ("a", "b"))
    assert after_deletion(["a"], set(), erasure=True) == Fate(Action.KEEP, ("a",))


def test_a_fact_whose_every_source_went_is_dropped() -> None:
    assert after_deletion(["a"], {"a"}) == Fate(Action.DROP, (), ("a",))
    fate = after_deletion(["a", "b", "a"], {"b", "a", "z"})
    assert fate.action is Action.DROP and fate.sources == () and set(fate.removed) == {"a", "b"}


def test_a_fact_that_lost_some_sources_keeps_the_others_in_order() -> None:
    fate = after_deletion(["a", "b", "c", "b"], {"b"})
    assert fate == Fate(Action.TRIM, ("a", "c"), ("b",))


def test_an_erasure_drops_a_fact_with_any_erased_source() -> None:
    fate = after_deletion(["a", "b", "c"], {"b"}, erasure=True)
    assert fate == Fate(Action.DROP, (), ("b",))


def test_a_fact_without_sources_has_nothing_to_lose() -> None:
    assert after_deletion([], {"a"}).action is Action.KEEP


def test_a_fact_is_dated_alone_only_when_no_source_is_stored() -> None:
    # A capture the gate skipped is never stored: its facts are dated by themselves.
    assert dated_alone(["capture-1"], set())
    assert dated_alone([], {"m"})
    assert not dated_alone(["capture-1", "m"], {"m"})
