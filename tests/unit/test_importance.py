"""The inferred importance tier of a write that gave none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.importance import infer_importance


@pytest.mark.parametrize(
    "text",
    [
        "Always run the linter before pushing.",
        "Please never deploy on Fridays.",
        "Note: do not commit secrets to the repo.",
        "We decided to move the launch to March.",
        "From now on the staging database is read-only.",
        "Tests are required before every merge.",
        "The report deadline is June 3.",
        "Maya is allergic to peanuts.",
        "Deploy the fix. Make sure the cache is cleared first.",
        "Never be late to the standup.",
        "Don't let Bob merge to main.",
    ],
)
def test_instructions_decisions_and_constraints_are_high(text: str) -> None:
    assert infer_importance(text) == "high"


@pytest.mark.parametrize(
    "text", ["ok thanks!", "Haha, nice", "See ya!", "Bye!", "You too!", ";)", "thank you so much"]
)
def test_bare_chatter_is_low(text: str) -> None:
    assert infer_importance(text) == "low"


@pytest.mark.parametrize(
    "text",
    [
        "Alice moved to Berlin in March.",
        "Ran 5k in 27:10 this morning.",
        "Don't give up on your dreams!",  # encouragement, not an instruction
        "Always happy to help, Jon!",
        "ok 42",  # a figure is not chatter
        "Thanks, the meeting moved to room 4B on Tuesday.",  # chatter words plus content
        "ok ok ok thanks thanks thanks thanks",  # too long to dismiss
    ],
)
def test_everything_else_is_normal(text: str) -> None:
    assert infer_importance(text) == "normal"


@given(st.text(max_size=300))
def test_always_one_of_the_three_tiers(text: str) -> None:
    assert infer_importance(text) in {"high", "normal", "low"}
