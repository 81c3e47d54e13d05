"""Retrieval feedback's math (`pcm_common.domain.feedback`)."""

from __future__ import annotations

from pcm_common.domain import feedback as fb

RULE = fb.FeedbackRule()


def test_cue_weight_rises_from_near_to_full() -> None:
    assert fb.cue_weight(RULE.near, RULE) == 0.0
    assert fb.cue_weight(0.5, RULE) == 0.0
    mid = fb.cue_weight((RULE.near + RULE.full) / 2, RULE)
    assert abs(mid - 0.5) < 1e-9
    assert fb.cue_weight(RULE.full, RULE) == 1.0
    assert fb.cue_weight(1.0, RULE) == 1.0


def test_bias_is_bounded_however_many_cues() -> None:
    many_helpful = [(1.0, RULE.helpful)] * 20
    assert fb.bias(many_helpful, 0.0, RULE) == RULE.max_bias
    many_bad = [(1.0, RULE.not_helpful)] * 20
    assert fb.bias(many_bad, -1.0, RULE) == -RULE.max_bias
    # A memory's own term is bounded on its own before it joins the cue terms.
    assert fb.bias([], 5.0, RULE) == RULE.max_memory_bias


def test_bias_weights_each_cue() -> None:
    got = fb.bias([(0.5, RULE.helpful), (1.0, RULE.not_helpful)], 0.0, RULE)
    assert abs(got - (0.5 * RULE.helpful + RULE.not_helpful)) < 1e-9


def test_signals_set_not_added() -> None:
    applied = {"a": "helpful", "b": "not_helpful"}
    wanted = {"a": "helpful", "b": "helpful", "c": "missed"}
    assert fb.changed(applied, wanted) == {"b": "helpful", "c": "missed"}
    assert fb.changed({**applied, **fb.changed(applied, wanted)}, wanted) == {}


def test_cue_terms_follow_the_last_signal() -> None:
    terms = fb.cue_terms({"a": "helpful", "b": "not_helpful", "c": "missed", "d": "wrong"}, RULE)
    assert terms == {
        "a": RULE.helpful,
        "b": RULE.not_helpful,
        "c": RULE.missed,
        "d": RULE.not_helpful,
    }
    assert max(abs(v) for v in terms.values()) <= RULE.max_bias


def test_problems_name_each_bad_id() -> None:
    delivered = ["a", "b"]
    assert fb.problems(delivered, ["a"], ["b"], ["c"]) == []
    bad = fb.problems(delivered, ["a", "x"], ["a"], ["b"])
    assert any("x was not delivered" in p for p in bad)
    assert any("a is given more than once" in p for p in bad)
    assert any("b was delivered" in p for p in bad)


def test_signals_of_and_memory_delta() -> None:
    assert fb.signals_of(["a"], ["b"], ["c"]) == {"a": "helpful", "b": "not_helpful", "c": "missed"}
    assert fb.memory_delta("helpful", RULE) > 0 > fb.memory_delta("not_helpful", RULE)
    assert fb.memory_delta("wrong", RULE) <= fb.memory_delta("not_helpful", RULE)
    assert fb.memory_delta("other", RULE) == 0.0
