"""Pure surprisal / absence rules (pcm_common.domain.surprisal)."""

from __future__ import annotations

import random
from collections import Counter

from pcm_common.domain import routine_rules as rr
from pcm_common.domain import surprisal as sp

DAY = 86400.0


def test_family_keeps_earlier_similar_nearest_first() -> None:
    cands = [
        sp.Candidate("a", 0.9, 10.0),
        sp.Candidate("b", 0.5, 20.0),
        sp.Candidate("later", 0.99, 200.0),  # after the memory: never family
        sp.Candidate("far", 0.2, 5.0),  # below the threshold
        *[sp.Candidate(f"x{i}", 0.6, float(i)) for i in range(20)],
    ]
    fam = sp.select_family(cands, 100.0)
    assert fam[0] == "a"
    assert "later" not in fam and "far" not in fam
    assert len(fam) == sp.FAMILY_MAX


def test_quantities_are_typed_and_comparable() -> None:
    qs = sp.parse_quantities("Ran 4.8 km on the river path, time 1:03:11. Paid $1,350.00 at 7pm")
    assert [(q.key, q.value) for q in qs] == [
        ("distance", 4800.0),
        ("duration", 3791.0),
        ("money:USD", 1350.0),
        ("time_of_day", 19 * 60.0),
    ]
    # dates and years say when, not how much
    assert sp.parse_quantities("On 2024-03-01 in 2023 for the 3rd time") == []
    assert sp.keyed(sp.parse_quantities("8 km in 45:15"))[("duration", 0)].value == 2715.0
    # keyed by what they measure, whatever the order a phrasing states them in
    a = sp.keyed(sp.parse_quantities("8 km in 45:15"))
    b = sp.keyed(sp.parse_quantities("45:15 for 8 km"))
    assert {k: q.value for k, q in a.items()} == {k: q.value for k, q in b.items()}


def _fam(values: list[float], unit: str = "min") -> list[list[sp.Quantity]]:
    return [sp.parse_quantities(f"Coffee with Tom ({v:g} {unit})") for v in values]


def test_value_outlier_flagged_normal_variation_not() -> None:
    family = _fam([60, 56, 70, 57, 56, 64, 65, 54])
    (low,) = sp.value_deviations(sp.parse_quantities("Coffee (6 min)"), family)
    assert low.score >= sp.FLAG_MIN_SCORE
    (ok,) = sp.value_deviations(sp.parse_quantities("Coffee (68 min)"), family)
    assert ok.score < sp.FLAG_MIN_SCORE
    # a value inside the family's own range is never an outlier
    (inside,) = sp.value_deviations(sp.parse_quantities("Coffee (54 min)"), family)
    assert inside.score < sp.FLAG_MIN_SCORE


def test_constant_amount_small_change_is_not_an_outlier_big_one_is() -> None:
    family = [sp.parse_quantities("Rent $2,100.00") for _ in range(8)]
    (small,) = sp.value_deviations(sp.parse_quantities("Rent $2,120.00"), family)
    (big,) = sp.value_deviations(sp.parse_quantities("Rent $3,347.29"), family)
    assert small.score < sp.FLAG_MIN_SCORE <= big.score


def test_too_few_values_are_not_judged() -> None:
    assert sp.value_deviations(sp.parse_quantities("Coffee (6 min)"), _fam([60, 61])) == []


def test_routine_stopped_continuing_and_irregular() -> None:
    weekly = [i * 7 * DAY for i in range(8)]
    last = weekly[-1]
    assert rr.routine_state(weekly, last + 1 * DAY).stopped is False  # type: ignore[union-attr]
    state = rr.routine_state(weekly, last + 22 * DAY)
    assert state is not None and state.stopped and state.median_gap_s == 7 * DAY
    # entries after `now`: it went on, so it never counts as stopped
    assert not rr.routine_state([*weekly, last + 30 * DAY], last + 22 * DAY).stopped  # type: ignore[union-attr]
    # too few entries
    assert rr.routine_state(weekly[:4], last + 100 * DAY) is None
    # irregular (cv >= 1): no routine to break
    irregular = [0.0, 1 * DAY, 2 * DAY, 3 * DAY, 60 * DAY, 61 * DAY]
    st = rr.routine_state(irregular, 200 * DAY, min_n=5)
    assert st is None or not st.stopped or st.cv < 1


def test_stopped_after_two_and_a_half_intervals_unless_it_paused_as_long_before() -> None:
    weekly = [i * 7 * DAY for i in range(8)]
    last = weekly[-1]
    assert rr.routine_state(weekly, last + 17 * DAY).stopped is False  # type: ignore[union-attr]
    assert rr.routine_state(weekly, last + 18 * DAY).stopped is True  # type: ignore[union-attr]
    # One skipped week in the run: quiet must outlast that break by an interval (21 days).
    skipped = [*weekly[:4], *(t + 7 * DAY for t in weekly[4:])]
    last = skipped[-1]
    state = rr.routine_state(skipped, last + 18 * DAY)
    assert state is not None and state.regular and not state.stopped
    assert rr.routine_state(skipped, last + 22 * DAY).stopped is True  # type: ignore[union-attr]


def test_isolated_old_entry_does_not_break_the_current_run() -> None:
    daily = [400 * DAY + i * DAY for i in range(8)]
    state = rr.routine_state([0.0, *daily], daily[-1] + 5 * DAY)
    assert state is not None and state.regular and state.stopped and state.n == 8


def test_a_burst_of_notes_is_no_routine() -> None:
    """Entries seconds or minutes apart are one sitting: never regular, never stopped."""
    burst = [1000.0 + 5 * i for i in range(6)]
    state = rr.routine_state(burst, burst[-1] + 10)
    assert state is not None and not state.regular and not state.stopped
    minutes = [1000.0 + 600 * i for i in range(6)]
    assert not rr.routine_state(minutes, minutes[-1] + DAY).stopped  # type: ignore[union-attr]
    every_four_hours = [1000.0 + 4 * 3600 * i for i in range(6)]
    state = rr.routine_state(every_four_hours, every_four_hours[-1] + DAY)
    assert state is not None and state.regular and state.stopped


def _build(families: dict[str, list[str]]) -> dict[str, str]:
    """Apply routine_join to memories in order, as the sweeper does when judging."""
    routine_of: dict[str, str] = {}
    for mid, fam in families.items():
        sizes = Counter(routine_of.values())
        plan = rr.routine_join(mid, fam, routine_of, sizes)
        if plan.target is None:
            continue
        for r in plan.merge:
            for m, owner in list(routine_of.items()):
                if owner == r:
                    routine_of[m] = plan.target
        for m in (mid, *plan.adopt):
            routine_of[m] = plan.target
    return routine_of


def test_routine_join_grows_a_series_from_its_first_entries() -> None:
    routine_of = _build(
        {
            "e1": [],
            "e2": ["e1"],
            "e3": ["e1", "e2"],
            "e4": ["e3", "e2", "e1"],
            "e5": ["e4", "e3", "e2", "e1"],
        }
    )
    assert set(routine_of) == {"e1", "e2", "e3", "e4", "e5"}
    assert len(set(routine_of.values())) == 1


def test_routine_join_needs_two_shared_members_and_half_the_family() -> None:
    routine_of = {"c1": "C", "c2": "C", "c3": "C", "p1": "P", "p2": "P"}
    sizes = {"C": 3, "P": 2}
    # A coffee entry whose family caught two phone calls stays with coffee.
    plan = rr.routine_join("c4", ["c1", "c2", "c3", "p1", "p2"], routine_of, sizes)
    assert plan.target == "C" and plan.merge == () and plan.adopt == ()
    # One shared member is not enough; the rest of its family starts a routine with it.
    plan = rr.routine_join("x", ["c1", "y1", "y2"], routine_of, sizes)
    assert plan.target == "x" and plan.adopt == ("y1", "y2")
    # Nothing shared and nothing unplaced: no routine.
    assert rr.routine_join("z", ["c1"], routine_of, sizes).target is None


def test_routine_join_merges_two_ends_of_one_routine_into_the_larger() -> None:
    routine_of = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}
    plan = rr.routine_join("m", ["a1", "a2", "b1", "b2"], routine_of, {"A": 3, "B": 2})
    assert plan.target == "A" and plan.merge == ("B",)


def test_routine_join_is_idempotent_for_a_memory_judged_again() -> None:
    routine_of = {"e1": "R", "e2": "R", "e3": "R"}
    first = rr.routine_join("e3", ["e1", "e2"], routine_of, {"R": 3})
    assert first.target == "R" and first.merge == () and first.adopt == ()


def test_routine_join_reads_only_the_sizes_it_names() -> None:
    """`routines_to_rank` names every size the rule reads: plans from those sizes alone
    equal plans from all sizes (random families over a few routines)."""
    rng = random.Random(5)
    ids = [f"m{i}" for i in range(30)]
    for _ in range(500):
        routine_of = {m: rng.choice("ABCD") for m in ids if rng.random() < 0.6}
        sizes = dict(Counter(routine_of.values()))
        mid = rng.choice(ids)
        fam = rng.sample(ids, rng.randint(0, 12))
        ranked = rr.routines_to_rank(mid, fam, routine_of)
        few = {r: sizes[r] for r in ranked}
        assert rr.routine_join(mid, fam, routine_of, few) == rr.routine_join(
            mid, fam, routine_of, sizes
        )


def test_distinct_events_for_near_duplicates() -> None:
    a = "Went to Maya's class at Lotus Studio tonight (75 min)."
    assert sp.distinct_events(a, a.replace("Maya", "Ines"))
    base = "Refilled the allergy tablets at QuickCare Pharmacy; copay $15.00."
    assert sp.distinct_events(base, base + " The pharmacist said the dose has been doubled.")
    assert not sp.distinct_events(base, base.replace("Refilled", "Picked up"))


def test_routine_voters_are_the_near_members_when_there_are_enough() -> None:
    """A gym log's family: its own series close, a neighbouring routine's entries far. The
    near ones decide its routine; one near member alone is too few, and the whole family
    decides (a new phrasing's first entries)."""
    from pcm_common.domain.routine_rules import ROUTINE_NEAR_MARGIN, routine_voters

    family = [("gym1", 0.91), ("w1", 0.52), ("gym2", 0.86), ("w2", 0.5), ("w3", 0.49)]
    assert routine_voters(family) == ["gym1", "gym2"]
    lone = [("b1", 0.93), ("a1", 0.6), ("a2", 0.58)]
    assert routine_voters(lone) == ["b1", "a1", "a2"]
    edge = [("x", 0.8), ("y", 0.8 - ROUTINE_NEAR_MARGIN)]
    assert routine_voters(edge) == ["x", "y"]
    assert routine_voters([]) == []


def test_t_quantile_matches_students_table() -> None:
    # one-sided 0.1% points of Student's t (standard tables)
    for df, q in ((3, 10.215), (4, 7.173), (9, 4.297), (30, 3.385)):
        assert abs(sp.t_quantile(1e-3, df) - q) < 0.01


def test_an_early_entry_needs_a_larger_departure_than_a_late_one() -> None:
    """The same +20% after four tight entries is noise, after eleven it is news."""
    tight = [1028.0, 1054.0, 1044.0, 1033.0, 1040.0, 1036.0, 1049.0, 1031.0, 1045.0, 1038.0]
    memory = sp.parse_quantities("$1,250.00")
    early = sp.value_deviations(memory, [sp.parse_quantities(f"${v:,.2f}") for v in tight[:4]])
    late = sp.value_deviations(memory, [sp.parse_quantities(f"${v:,.2f}") for v in tight])
    assert early[0].score < sp.FLAG_MIN_SCORE <= late[0].score
    far = sp.value_deviations(sp.parse_quantities("$205.00"), [
        sp.parse_quantities(f"${v:,.2f}") for v in tight[:4]
    ])  # fmt: skip
    assert far[0].score >= sp.FLAG_MIN_SCORE


def test_a_figure_written_in_whole_units_may_move_by_one() -> None:
    family = [sp.parse_quantities("ack 5 min") for _ in range(8)]
    (one_more,) = sp.value_deviations(sp.parse_quantities("ack 6 min"), family)
    (ten_times,) = sp.value_deviations(sp.parse_quantities("ack 50 min"), family)
    assert one_more.score < sp.FLAG_MIN_SCORE <= ten_times.score


def test_a_clock_past_midnight_wraps_and_never_scores_below_zero() -> None:
    """Times of day are compared on a 24-hour circle; a clock written past 24:00 (a shift
    log's "31:20") once gave a negative distance, a negative score and a verdict the judge
    could not store (the memory was retried by every sweep)."""
    family = [[sp.Quantity("time_of_day", 7 * 60.0 + m, f"07:{m:02d}")] for m in (0, 5, 10, 15)]
    late = [sp.Quantity("time_of_day", 31 * 60.0 + 20, "31:20")]
    (dev,) = sp.value_deviations(late, family)
    assert 0.0 <= dev.score <= 1.0 and dev.z >= 0.0
    assert sp.z_score(-1.0, 5) == 0.0
