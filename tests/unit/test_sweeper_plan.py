"""The sweeper's judging plan: payloads read once give what reading them again gives; and
which family member a judged memory supersedes."""

from __future__ import annotations

from typing import Any

from pcm_common.domain.memory import MemoryRecord
from pcm_common.judge import Verdict
from pcm_common.judge.local import LocalJudge
from pcm_common.stores.vectors import ScoredPoint
from pcm_sweeper.judgement import Judgement, event_count, routine_item
from pcm_sweeper.judging import Judging
from pcm_sweeper.kin import Kinship
from tests.unit.test_judges import RUNS, rec


def _point(day: int, repeats: int = 0, user: str = "u") -> ScoredPoint:
    payload = {**rec(RUNS[day % len(RUNS)], day, repeats).to_payload(), "user_id": user}
    return ScoredPoint(payload["id"], 0.9, payload, vector=[1.0, 0.0])


def test_plan_with_the_memory_read_before_is_the_same_plan() -> None:
    judging = Judging(res=Any)  # type: ignore[arg-type]
    point = _point(40)
    family = [_point(d, repeats=d % 3, user="u" if d % 4 else "other") for d in range(1, 8)]
    (memory,) = judging.memories([point])
    assert not isinstance(memory, Exception)
    fresh = judging.plan(point, family)
    reused = judging.plan(point, family, memory)
    assert (reused.memory, reused.records, reused.family_times) == (
        fresh.memory,
        fresh.records,
        fresh.family_times,
    )
    cut = memory.created_at
    assert fresh.family_times is not None
    assert [event_count(f.payload, cut) for f in family] == [
        1 + sum(1 for t in ts[1:] if t < cut.timestamp()) for ts in fresh.family_times
    ]
    # The routine index gets the same item from the times read once.
    assert routine_item(point, family, fresh.family_times) == routine_item(point, family)


def test_a_malformed_payload_is_its_own_error() -> None:
    bad = ScoredPoint("x", 0.0, {"text": "no id, no dates"}, vector=[1.0])
    good = _point(3)
    out = Judging.memories([bad, good])
    assert isinstance(out[0], Exception) and not isinstance(out[1], Exception)


class _Decides(LocalJudge):
    decides_supersession = True


def test_supersession_follows_a_judge_that_decides_it() -> None:
    """With a deciding judge the model's choice stands (if eligible), and "no update" is
    not second-guessed by the rules; with the local judge the rules decide."""
    old = _point(1)
    old.payload["text"] = "The team standup is at 9:30 every morning."
    other_user = _point(2, user="other")
    pinned = _point(3)
    pinned.payload["pinned"] = True
    new = _point(40)
    new.payload["text"] = "The team standup is now at 10:15 every morning."
    old.score = 0.9
    family = [old, other_user, pinned]
    j = Judgement(new, MemoryRecord.from_payload(new.payload), family, None)

    deciding = Judging(res=Any, judge=_Decides())  # type: ignore[arg-type]
    assert deciding._supersedes(j, Verdict(score=0.1, updates=0)) == old.id
    assert deciding._supersedes(j, Verdict(score=0.1, updates=None)) is None
    assert deciding._supersedes(j, Verdict(score=0.1, updates=1)) is None  # another user
    assert deciding._supersedes(j, Verdict(score=0.1, updates=2)) is None  # pinned
    assert deciding._supersedes(j, Verdict(score=0.1, updates=7)) is None  # not in the family
    # No verdict (a family too small to judge): the rules decide, as with the local judge.
    rules = Judging(res=Any, judge=LocalJudge())  # type: ignore[arg-type]
    assert deciding._supersedes(j, None) == rules._supersedes(j, Verdict(score=0.1)) == old.id


def test_plan_compares_the_family_without_other_routines_plus_its_kin() -> None:
    """Kinship (the routine index's view): members of another routine leave the compared
    set, the routine's entries in other wordings join it; the stored family and the
    routine index's item stay the family found by the search."""
    judging = Judging(res=Any)  # type: ignore[arg-type]
    point = _point(40)
    family = [_point(d) for d in (1, 2)]
    kin = [_point(d) for d in (4, 5)]
    foreign = family[1].id
    small = judging.plan(point, family)
    assert small.records is None  # two events: too few to judge
    j = judging.plan(point, family, kinship=Kinship(kin, frozenset({foreign})))
    assert j.records is not None
    assert [r.text for r in j.records] == [f.payload["text"] for f in (*family[:1], *kin)]
    assert j.family == family and j.kin == kin
    assert routine_item(point, j.family, j.family_times) == routine_item(point, family)


def test_plan_keeps_the_family_when_kinship_leaves_too_few_events() -> None:
    judging = Judging(res=Any)  # type: ignore[arg-type]
    point = _point(40)
    family = [_point(d) for d in (1, 2, 3)]
    foreign = frozenset(f.id for f in family[1:])
    j = judging.plan(point, family, kinship=Kinship([], foreign))
    assert j.records is not None and len(j.records) == 3 and j.kin == []
