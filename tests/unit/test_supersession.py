"""Supersession rules: which earlier memory a newer one updates."""

from __future__ import annotations

import pytest

from pcm_common.domain.supersession import Earlier, asks_about_past, superseded


def one(old: str, new: str, cos: float = 0.9) -> str | None:
    return superseded(new, [Earlier("old", old, cos)])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The standup is at 9:30 every morning.", "The standup is now at 10:00 every morning."),
        ("Alice lives in Berlin.", "Alice now lives in Munich."),
        ("Our main database is Postgres.", "We switched our main database to MySQL."),
        ("Rent is 1,200 a month.", "Rent is 1,450 a month from now on."),
        # A numbered name later in the sentence is a value like any other.
        ("The meeting is in room 12.", "The meeting is now in room 14."),
    ],
)
def test_an_update_supersedes_what_it_replaces(old: str, new: str) -> None:
    assert one(old, new) == "old"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Two events, not an update: no cue.
        ("Ran 5k in 27:10 this morning.", "Ran 5k in 41:30 this morning."),
        # A cue, but nothing replaced: both can hold.
        ("I'm learning piano.", "I'm now learning guitar."),
        # Same template, another subject: a different fact.
        (
            "Sybil switched the mobile release from MySQL to Qdrant.",
            "Sybil switched the data retention policy from MySQL to React.",
        ),
        # Only an addition, nothing of the old value goes.
        ("Alice lives in Berlin.", "Alice now lives in Berlin with Tom."),
        # Another numbered thing of the same kind, not a new value of the first.
        ("Locker 4 moved to the basement.", "Locker 7 moved to the basement."),
        ("Probe 0 edited: locker 0 moved.", "Probe 2 edited: locker 2 moved."),
    ],
)
def test_no_update_no_supersession(old: str, new: str) -> None:
    assert one(old, new) is None


def test_too_far_apart_is_not_the_same_fact() -> None:
    assert one("The standup is at 9:30.", "The standup is now at 10:00.", cos=0.6) is None


def test_the_closest_candidate_is_superseded() -> None:
    earlier = [
        Earlier("far", "The standup is at 9:00.", 0.80),
        Earlier("near", "The standup is at 9:30.", 0.92),
        Earlier("other", "Lunch is at 12:30.", 0.95),
    ]
    assert superseded("The standup is now at 10:00.", earlier) == "near"


@pytest.mark.parametrize(
    ("query", "past"),
    [
        ("What did we use before MySQL?", True),
        ("Where did Alice live previously?", True),
        ("When was the standup originally?", True),
        ("When was the standup before?", True),
        ("When is the standup?", False),
        ("Where does Alice live?", False),
        ("How old is my daughter?", False),
        ("Please change my password", False),
        ("What should I do before the meeting?", False),
    ],
)
def test_questions_about_the_past(query: str, past: bool) -> None:
    assert asks_about_past(query) is past
