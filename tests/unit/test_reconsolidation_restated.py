"""Reconsolidation's rules of session 64 (docs/decisions/0064-reconsolidation-generality.md):
a value restated with another verb (`domain.value_slots`), a subject said another way
(`domain.abbreviations`), and the "another fact" guards: a sibling subject, a share of
the figure's noun, another owner, a need still ahead, a question without its mark. Every
sentence is written for these tests (none is from bench/reconsolidation_pairs)."""

from __future__ import annotations

import pytest

from pcm_common.domain import abbreviations, slots, value_slots
from pcm_common.domain.reconsolidation import judge

RESTATED = [
    # (earlier, newer): the relation words change, the value's form and noun stay.
    ("The Starter tier is priced at $9/user.", "Finance says the Starter tier is $12/user."),
    ("Dad gets 25mg of metoprolol at night.", "The clinic moved dad to 50mg of metoprolol."),
    ("The canary receives 5% of traffic.", "canary share bumped to 25%"),
    ("The queue worker pool has 8 threads.", "Tuned the queue worker pool down to 4 threads."),
    ("Our warehouse bot runs firmware 2.4.7.", "Flashed 2.5.0 onto the warehouse bot."),
    ("The reports service is deployed in ap-south-1.", "reports service sits in ap-east-2"),
    ("We keep three hens.", "A fox got one, so we keep two hens."),
    ("I walk 6km every morning.", "My knee is better, my walk is back to 9km each morning."),
]

NOT_RESTATED = [
    # A sibling: a modifier of its own before the earlier subject.
    ("The Starter tier is priced at $9/user.", "The Scale tier is priced at $30/user."),
    ("Invoices are archived in eu-north-1.", "Draft invoices are archived in eu-south-2."),
    ("My morning heart rate is 58 bpm.", "My sprint heart rate peaks at 175 bpm."),
    # A share of the figure's noun, not the figure.
    ("The build cache holds 20GB of artifacts.", "The build cache spends 6GB of its artifacts."),
    ("The travel budget is $8k.", "About $2k of the travel budget went on trains."),
    # A unit of another thing: minutes of downtime are no token lifetime.
    ("Session cookies expire after 30 minutes.", "The session service had 4 minutes of downtime."),
    # Another owner of the same kind of thing.
    ("My laptop is a ThinkPad T14.", "My brother just bought a ThinkPad T16."),
    # A clock time with another verb: another event.
    ("The ferry leaves at 7:15.", "The ferry docks at 8:05."),
    # Another possessor's thing, the speaker's statement aside.
    ("We keep three hens.", "Our neighbours keep five hens."),
    # A figure counting another noun.
    ("The pool pass costs €25 per month.", "The pool charges €3 for a locker."),
]


@pytest.mark.parametrize(("old", "new"), RESTATED)
def test_a_value_restated_with_another_verb_updates(old: str, new: str) -> None:
    v = judge(old, new)
    assert v.update, v
    assert v.replaced


@pytest.mark.parametrize(("old", "new"), NOT_RESTATED)
def test_a_sibling_a_share_or_another_noun_is_another_fact(old: str, new: str) -> None:
    assert not judge(old, new).update, judge(old, new)


def test_values_read_form_noun_and_share() -> None:
    (dose,) = value_slots.values("Mum takes 40mg of simvastatin.")
    assert (dose.form, dose.noun, dose.share) == ("9mg", "simvastatin", False)
    (part,) = value_slots.values("It uses 3GB of its memory.")
    assert part.share
    (version,) = value_slots.values("The router runs firmware 1.0.12.")
    assert version.form == "9.9.9" and version.head == "firmware"
    (region,) = value_slots.values("Stored in us-east-2 today")
    assert region.form == "a-a-9"


def test_same_slot_needs_the_same_form() -> None:
    (a,) = value_slots.values("The plan costs $10/month.")
    (b,) = value_slots.values("The plan is $10/seat now.")
    (c,) = value_slots.values("The plan is $14/month now.")
    assert not value_slots.same_slot(a, b)  # another unit: another slot
    assert value_slots.same_slot(a, c)


@pytest.mark.parametrize(
    ("text", "other", "expected"),
    [
        ("prod runs fine", "Production is on Debian.", "production runs fine"),
        ("The repo is public.", "Our repository has 3 owners.", "The repository is public."),
        ("docs are in Markdown", "The documentation is small.", "documentation are in Markdown"),
        ("HR moved floors.", "Human Resources sits on floor 2.", "Human Resources moved floors."),
    ],
)
def test_short_forms_are_written_out_in_the_other_texts_words(
    text: str, other: str, expected: str
) -> None:
    assert abbreviations.expand(text, other) == expected


def test_words_the_other_text_has_and_short_words_stay() -> None:
    assert abbreviations.expand("The car is red.", "The cart is blue.") == "The car is red."
    assert abbreviations.expand("Production is up.", "prod is down") == "Production is up."
    assert abbreviations.expand("An ox.", "The oxygen tank.") == "An ox."


def test_an_abbreviated_subject_is_the_same_subject() -> None:
    v = judge("The production cache runs Redis 6.", "prod cache is on Redis 7 since Tuesday")
    assert v.update, v
    v = judge("The Site Reliability team reports to Ahmed.", "SRE now reports to Bea.")
    assert v.update, v


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A sibling subject with a change cue is no update of the earlier subject.
        ("The demo cluster runs Nomad 1.5.", "The load-test cluster was upgraded to Nomad 1.7."),
        # A need still ahead, a possibility, a question without its mark.
        ("The app targets iOS 15.", "Apple drops iOS 15 soon, so the app will need a bump."),
        ("The office Wi-Fi is 100 Mbps.", "We'll likely have to raise the Wi-Fi to 1 Gbps."),
        ("The retro is on Thursdays.", "The retro may move to Fridays once the team grows."),
        ("The retro is on Thursdays.", "Is it fine to hold the retro on Fridays"),
        ("Our mail goes through Postmark.", "We could switch our mail to SES next quarter."),
    ],
)
def test_siblings_needs_and_questions_change_nothing(old: str, new: str) -> None:
    assert not judge(old, new).update, judge(old, new)


def test_eventually_in_the_past_is_a_change() -> None:
    v = judge("Tickets are tracked in Trello.", "Eventually we moved tickets from Trello to Jira.")
    assert v.update, v


def test_a_question_that_goes_on_to_say_something_is_no_question() -> None:
    v = judge("The demo is at 3pm.", "Did you see the email? The demo moved to 4pm.")
    assert v.update, v


def test_other_subject_sees_modifiers_not_verbs_or_values() -> None:
    assert slots.other_subject("The web cluster has 5 nodes.", "Batch cluster nodes: 9")
    # A verb before the earlier value, or a word before a name, is no sibling.
    assert not slots.other_subject("The default branch is trunk.", "Renamed trunk to main.")
    assert not slots.other_subject(
        "We file expenses in Expensify.", "Expenses go to Ramp; the old Expensify account closes."
    )
