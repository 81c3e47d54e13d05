"""Which queries are charged (`pcm_common.domain.affect.urgency`, issue 36 item 7): the
pure parts; the labelled set's precision and recall are `bench.charge`'s."""

from __future__ import annotations

import pytest

from pcm_common.domain import affect
from pcm_common.domain.memory import Affect

OFFSET, SPAN = 0.12, 0.2


def test_the_margin_is_the_closest_urgent_minus_the_closest_calm() -> None:
    assert affect.prototype_margin([0.2, 0.5], [0.1, 0.3]) == pytest.approx(0.2)
    assert affect.prototype_margin([], [0.3]) == 0.0


@pytest.mark.parametrize(
    ("arousal", "margin", "level"),
    [
        (0.0, OFFSET, 0.5),  # the offset reads as the threshold: not charged yet
        (0.0, OFFSET + SPAN, 1.0),
        (0.0, OFFSET + SPAN / 2, 0.75),
        (0.0, -0.3, 0.0),
        (0.7, -0.3, 0.7),  # the words alone charge
        (0.2, OFFSET + SPAN / 2, 0.75),  # the meaning alone charges
    ],
)
def test_urgency_is_the_higher_of_words_and_meaning(
    arousal: float, margin: float, level: float
) -> None:
    got = affect.urgency(arousal, margin, offset=OFFSET, span=SPAN)
    assert got == pytest.approx(level)


def test_a_question_about_the_past_is_charged_by_its_words_only() -> None:
    assert affect.urgency(0.1, 0.3, offset=OFFSET, span=SPAN, looks_back=True) == 0.1
    assert affect.retrospective("When did Joanna's laptop crash?")
    assert affect.retrospective("What area was hit by a flood?")
    assert not affect.retrospective("the server is down")
    assert not affect.retrospective("What do I do, prod is broken?")


def test_the_urgent_state_charges_by_urgency_only() -> None:
    design = Affect(valence=0.1, arousal=0.05, complexity=0.9)  # a long design question
    calm = affect.urgent_state(design, 0.2)
    assert affect.charge(calm, 0.5) == 0.0  # complexity no longer charges
    urgent = affect.urgent_state(Affect(valence=-0.4, arousal=0.2), 0.8)
    assert urgent.arousal == 0.8
    assert affect.charge(urgent, 0.5) == pytest.approx(0.6)


def test_the_prototypes_are_descriptions_not_the_labelled_queries() -> None:
    """Tuning on the labelled set must not copy it into the mechanism."""
    from bench.charge import DATA

    queries = {
        line.split('"query": "')[1].split('"')[0].lower()
        for line in DATA.read_text().splitlines()
        if line
    }
    for text in (*affect.URGENT_PROTOTYPES, *affect.CALM_PROTOTYPES):
        assert text.lower() not in queries
