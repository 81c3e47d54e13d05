"""Reconsolidation's structural rule (`domain.slots`, used by `domain.reconsolidation.judge`):
a newer statement that keeps the earlier one's frame and puts a value of the same kind
where the earlier value stood updates it, whatever words it changes with; one that puts
the value elsewhere, changes the relation, or names another subject does not. The
examples are written for these tests (none is from bench/reconsolidation_pairs)."""

from __future__ import annotations

import pytest

from pcm_common.domain import slots
from pcm_common.domain.reconsolidation import judge

SLOT_UPDATES = [
    # (earlier, newer): no change cue in any of them.
    ("The backup job runs at 2am.", "The backup job runs at 4am."),
    ("The API listens on port 8080.", "The API listens on port 9090."),
    ("The yoga class is on Mondays.", "The yoga class happens on Wednesdays this term."),
    ("Billing runs on Java 11.", "Billing runs on Java 21 after the upgrade."),
    ("My manager is Priya.", "My manager is Tomasz since the reorg."),
    ("The weekly report goes to Dana.", "The weekly report goes to Felix."),
    ("Lunch is at noon.", "Lunch is at 1pm."),
    ("The cluster has 12 nodes.", "The cluster has 20 nodes."),
    ("The kiln is fired twice a month.", "The kiln is fired once a week."),
    ("The invoice is due on March 3.", "The invoice is due on April 9."),
]

NOT_SLOT_UPDATES = [
    # A value of another kind: another fact about the subject.
    ("The backup job runs at 2am.", "The backup job takes 40 minutes."),
    # The value qualifies a thing of its own ("two people"), not the slot.
    ("The sales team sits on floor 3.", "The sales team hired two people in March."),
    # Another subject: a word of its own before the shared one.
    ("The API listens on port 8080.", "The admin API listens on port 9090."),
    # The relation went ("runs Ubuntu" / "runs nginx on port 80"): the new run lacks a name.
    ("The demo server runs Ubuntu 20.04.", "The demo server runs nginx on port 80."),
    # The figure is in a clause of its own.
    ("The launch is on May 4.", "The launch is risky because 3 testers are away."),
    # Plain words for plain words need a cue.
    ("My commute is by bike.", "My commute by bike is pleasant."),
    # Another subject: a word of its own inside the earlier one's subject.
    ("Mika's train leaves at 7:05.", "Mika's return train leaves at 18:40."),
    ("Ola's birthday is on May 2.", "Ola's brother's birthday is on May 20."),
    # A time the earlier value lacked narrows it: an exception, not a change.
    ("The pool opens at 7am.", "The pool opens at 9am on Sundays."),
    ("The shop closes at 6pm.", "The shop closes at 4pm in December."),
    # A statement about the past, and an addition.
    ("The office is in Chicago.", "The office used to be in Denver."),
    ("I use VS Code.", "I also use Vim."),
]


@pytest.mark.parametrize(("old", "new"), SLOT_UPDATES)
def test_a_value_of_the_same_kind_in_the_same_place_updates(old: str, new: str) -> None:
    v = judge(old, new)
    assert v.update and v.reason == "slot", v
    assert v.replaced  # the earlier value it replaced


@pytest.mark.parametrize(("old", "new"), NOT_SLOT_UPDATES)
def test_a_value_elsewhere_or_of_another_kind_is_no_update(old: str, new: str) -> None:
    assert not judge(old, new).update


def test_plain_words_fill_a_slot_only_with_a_cue_or_after_the_same_preposition() -> None:
    old = "The reading group meets at the Hub."
    assert judge(old, "The reading group now meets at the town library.").update
    assert not judge(old, "The reading group now has nine members.").update
    assert judge("Ravi gets to work by car.", "Ravi gets to work by tram these days.").update


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The earlier value said to be over: gone, replaced, not used any more.
        ("Our wiki is on Heroku.", "Heroku is no longer used; the wiki is on Render."),
        ("The office printer is a Brother HL.", "The Brother HL was replaced by a Canon."),
        ("Tasks are tracked in Trello.", "We don't use Trello anymore; tasks live in Asana."),
        ("Our CDN is Akamai.", "Fastly took over from Akamai as our CDN."),
        ("The cat food brand is Purina.", "We swapped Purina for Royal Canin."),
        ("The fridge is a Bosch.", "The Bosch died, so we got a Miele fridge."),
    ],
)
def test_the_earlier_value_negated_or_left_behind_updates(old: str, new: str) -> None:
    assert judge(old, new).update


def test_an_ending_of_a_plain_word_or_a_need_is_no_update() -> None:
    # "build" is the subject, not the earlier value; a need is no change yet.
    assert not judge("The build uses Gradle.", "The build stopped working yesterday.").update
    assert not judge("My bike is a Trek.", "My bike needs replacing after 9000 km.").update
    assert not judge("Support hours are 9 to 5.", "Support is closed on public holidays.").update


def test_a_narrowing_time_is_a_change_when_said_outright() -> None:
    old = "The pool opens at 7am."
    assert judge(old, "The pool opening moved to 9am on Sundays.").update
    # a weekday that starts a reading of its own (its own clause) narrows nothing
    assert judge(old, "From Monday, the pool opens at 6:30am.").update


def test_value_kinds() -> None:
    assert slots.kind("7:45") == slots.kind("9pm") == slots.kind("noon") == "time"
    assert slots.kind("Thursdays") == "weekday"
    assert slots.kind("October") == "month"
    assert slots.kind("twice") == slots.kind("12") == slots.kind("$40") == "number"
    assert slots.kind("Figma") == "name" and slots.kind("Figma", first=True) is None
    assert slots.kind("evening") == "daypart"
    assert slots.kind("garage") is None
    # "may" is a month only when written as one.
    assert slots.kind("may") is None


def test_replacement_names_the_runs_and_whether_the_frame_was_kept() -> None:
    got = slots.replacement("The bus leaves at 7:10.", "The bus leaves at 7:25.")
    assert got.frame_kept and [r.words for r in got.old] == [("7:10",)]
    got = slots.replacement("The bus leaves at 7:10.", "The ferry docks at 9:00.")
    assert not got.frame_kept
