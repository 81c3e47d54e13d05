"""The precise cut (`pcm_recall.precise`): the empty test, the knee on the scores, each
memory's cosine floor, strong seeds and one line per text."""

from __future__ import annotations

from pcm_recall.precise import PreciseRule, kept, strong, text_key, unique_texts

RULE = PreciseRule(
    min_top_cosine=0.45, min_cosine=0.35, score_ratio=0.6, max_gap=0.25, seed_ratio=0.85
)


def test_nothing_relevant_is_empty() -> None:
    assert kept([1.0, 0.9], [0.44, 0.40], RULE) == []
    assert kept([], [], RULE) == []


def test_the_knee_stops_at_a_large_drop_or_far_below_the_best() -> None:
    # 1.0 -> 0.9 -> 0.85 then a drop of 0.3 (more than 0.25 of the best): three kept.
    assert kept([1.0, 0.9, 0.85, 0.55, 0.54], [0.6] * 5, RULE) == [0, 1, 2]
    # Small steps all the way down: stops under 0.6 of the best.
    assert kept([1.0, 0.9, 0.8, 0.7, 0.61, 0.59, 0.58], [0.6] * 7, RULE) == [0, 1, 2, 3, 4]


def test_a_memory_under_its_own_cosine_floor_is_left_out_inside_the_knee() -> None:
    assert kept([1.0, 0.95, 0.9], [0.6, 0.3, 0.5], RULE) == [0, 2]


def test_strong_seeds_are_near_the_best() -> None:
    assert strong([1.0, 0.9, 0.84, 0.8], RULE) == 2
    assert strong([], RULE) == 0


def test_identical_texts_are_shown_once() -> None:
    seen = {text_key("Pinned rule.")}
    items = ["The DB moved.", "the db   moved.", "Pinned  rule.", "Other."]
    assert unique_texts(items, str, seen) == ["The DB moved.", "Other."]
    assert text_key("Other.") in seen
