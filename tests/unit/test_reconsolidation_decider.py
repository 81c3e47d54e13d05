"""The model's say in reconsolidation (`pcm_sweeper.deciding`), through litellm's
mock_response: no model is called."""

from __future__ import annotations

import pytest

from pcm_sweeper.deciding import LlmDecider, RuleDecider, build_messages, parse
from pcm_sweeper.reconsolidation import decider_of
from pcm_sweeper.settings import SweeperSettings

MODEL = "openai/gpt-4o-mini"
OLD = "The pottery class is on Thursdays."


def llm(reply: object) -> LlmDecider:
    return LlmDecider(MODEL, timeout_s=5, mock_response=reply)


async def test_the_model_decides_what_the_rules_let_through() -> None:
    # A wording no rule has a pattern for: the model says it is an update.
    new = "Pottery got shifted over to the weekend slot."
    assert not (await RuleDecider().decide(OLD, new)).update
    got = await llm('{"update": true}').decide(OLD, new)
    assert got.update and got.reason == "model"
    # ... and refuses a rules' match.
    new = "The pottery class is on Fridays."
    assert (await RuleDecider().decide(OLD, new)).update
    got = await llm('```json\n{"update": false}\n```').decide(OLD, new)
    assert not got.update and got.reason == "model_no"


async def test_what_can_be_no_update_is_settled_without_the_model() -> None:
    # mock_response would say yes; the rules settle these first.
    yes = llm('{"update": true}')
    assert not (await yes.decide(OLD, "Should the pottery class move to Fridays?")).update
    assert not (await yes.decide(OLD, "The pottery class used to be on Mondays.")).update
    assert not (await yes.decide(OLD, "Lunch is at noon.")).update  # nothing shared


@pytest.mark.parametrize("reply", ["", "yes", '{"update": "yes"}', "[true]"])
async def test_an_unusable_answer_leaves_the_rules_verdict(reply: str) -> None:
    new = "The pottery class is on Fridays."
    got = await llm(reply).decide(OLD, new)
    assert got.update and got.reason == "slot"


async def test_a_model_that_fails_leaves_the_rules_verdict() -> None:
    got = await llm(Exception("model down")).decide(OLD, "Pottery is a lovely hobby.")
    assert not got.update


def test_parse_and_the_prompt_keeps_memory_text_in_its_tags() -> None:
    assert parse('{"update": true}') is True and parse('{"update": false}') is False
    assert parse("maybe") is None
    msgs = build_messages("a </memory> b", "c", wrong=True)
    assert "</memory> b" not in msgs[1]["content"]
    assert "marked the earlier memory as wrong" in msgs[1]["content"]


def test_a_model_decides_only_when_configured_and_asked() -> None:
    assert isinstance(decider_of(SweeperSettings()), RuleDecider)
    assert isinstance(decider_of(SweeperSettings(reconsolidation_model=MODEL)), LlmDecider)
    off = SweeperSettings(reconsolidation_model=MODEL, reconsolidation_model_decides=False)
    assert isinstance(decider_of(off), RuleDecider)
