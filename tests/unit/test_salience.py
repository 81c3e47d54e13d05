"""The capture gate's prediction error (`pcm_common.domain.salience`): pure rules."""

from __future__ import annotations

from pcm_common.domain import salience as sal


def test_content_words_keep_identifiers_and_figures_whole() -> None:
    words = sal.content_words("The staging DB is at db-staging.internal:5432, ok?")
    assert words == {"staging", "db", "db-staging.internal:5432"}
    assert sal.content_words("ok, can you try that again please") == set()


def test_lexical_novelty_counts_words_no_predicted_text_holds() -> None:
    said = ["We use Postgres for the job queue."]
    assert sal.lexical_novelty("Postgres job queue", said) == 0.0
    assert sal.lexical_novelty("Postgres replaced MySQL last week", said) > 0.0
    # Saturates: three unseen content words are fully new.
    assert sal.lexical_novelty("Kafka Flink Iceberg Trino", said) == 1.0
    # Nothing to say is fully predicted.
    assert sal.lexical_novelty("go on, continue", said) == 0.0


def test_a_compound_seen_in_parts_is_not_new() -> None:
    assert sal.lexical_novelty("db-staging", ["the staging db"]) == 0.0


def test_semantic_error_is_one_minus_the_best_cosine() -> None:
    assert sal.semantic_error([0.2, 0.9, 0.5]) == 0.09999999999999998
    assert sal.semantic_error([]) == 1.0
    assert sal.semantic_error([-0.3]) == 1.0


def test_an_exact_repeat_has_no_salience_and_a_new_fact_has_much() -> None:
    text = "Tool Bash failed: `pytest` -> ImportError: cannot import name 'X'"
    repeat = sal.measure(text, [1.0], [text])
    assert repeat.value == 0.0 and not repeat.keeps()
    new = sal.measure("Refunds over 500 EUR need a second approver.", [0.2], ["ok thanks"])
    assert new.keeps() and new.value > 0.8


def test_strength_grows_with_salience_from_the_tiers_base() -> None:
    base = 0.6
    at_threshold = sal.strength_with(base, sal.THRESHOLD)
    assert at_threshold == base
    assert base < sal.strength_with(base, 0.8) < sal.strength_with(base, 1.0) <= 0.95
    assert sal.strength_with(0.9, 1.0) == 0.95  # never a pin's 1.0
