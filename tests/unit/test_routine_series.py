"""Which family members may vote a memory into their routine (`routine_rules.same_series`):
when both name something, entries that share a name; else entries whose kinds of figure are
among the other's. A series that shares only a unit or a currency with another, under
another name, stays apart. Phrasings written for the test."""

from __future__ import annotations

from pcm_common.domain.quantities import parse_quantities
from pcm_common.domain.routine_rules import names_in, same_series
from pcm_common.stores.vectors import ScoredPoint
from pcm_sweeper.judgement import routine_item


def _kinds(text: str) -> frozenset[str]:
    return frozenset(q.kind for q in parse_quantities(text) if q.kind not in {"number", "count"})


def _same(a: str, b: str) -> bool:
    return same_series(a, b, _kinds(a), _kinds(b))


def test_names_are_capitalised_words_inside_a_sentence() -> None:
    assert names_in("Swim at Ocean Baths, 1.2 km.") == {"ocean", "baths"}
    assert names_in("Paid 40 CHF — Nordlicht Telecom.") == {"nordlicht", "telecom"}
    # a sentence's first word is no name, nor a currency code
    assert names_in("Weighed in at 81 kg. Felt fine.") == frozenset()


def test_entries_of_one_routine_in_two_wordings() -> None:
    assert _same("Swim at Ocean Baths, 1.2 km.", "1.4 km at Ocean Baths this morning")
    # one names nothing: the same kinds of figure suffice
    assert _same("Weighed in at 81.2 kg.", "81.0kg on the bathroom scale")


def test_a_series_sharing_only_a_unit_or_a_currency_stays_apart() -> None:
    # two monthly charges in euros from different providers
    assert not _same("Nordlicht Telecom took 31,20 €.", "Paid 12,99 € to Reelbox for the month.")
    # a lifting log beside a swim log, each at its own place, both with a time
    lifting = "Deadlifts at Forge Barbell, 55 min, top set 110 kg."
    assert not _same(lifting, "Swim at Ocean Baths, 40 min.")
    # unnamed entries measuring something else entirely
    assert not _same("Slept 7.5 h.", "Weighed in at 81.2 kg.")


def _point(pid: str, text: str, cos: float = 1.0) -> ScoredPoint:
    payload = {"id": pid, "text": text, "user_id": "u", "scope": "global", "created_ts": 1.0}
    return ScoredPoint(id=pid, score=cos, payload=payload)


def test_only_members_of_the_same_series_vote_for_a_routine() -> None:
    memory = _point("m", "Phone bill from Nordlicht Telecom: 31,20 €.")
    family = [
        _point("s1", "Paid 12,99 € to Reelbox for the month.", 0.66),
        _point("s2", "Paid 12,99 € to Reelbox for the month.", 0.65),
        _point("p1", "Nordlicht Telecom took 30,85 €.", 0.6),
    ]
    _, _, voters = routine_item(memory, family)
    assert set(voters) == {"p1"}
