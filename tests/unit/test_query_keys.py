"""Candidate entity keys of a recall query (pcm_common.extract.query)."""

from __future__ import annotations

from pcm_common.extract.query import base_forms, query_keys, query_types


def test_base_forms_regular_and_irregular() -> None:
    assert "recipe" in base_forms("recipes")
    assert "hobby" in base_forms("hobbies")
    assert "class" in base_forms("classes")
    assert "volunteer" in base_forms("volunteering")
    assert "bake" in base_forms("baking")
    assert "run" in base_forms("running")
    assert "try" in base_forms("tried")
    assert "child" in base_forms("children")
    assert "meet" in base_forms("met")
    assert base_forms("Sweden") == ["sweden"]


def test_query_keys_ngrams_skip_function_words() -> None:
    keys = query_keys("When did Caroline go to the LGBTQ support group?")
    assert {"caroline", "lgbtq support group", "support group", "lgbtq"} <= set(keys)
    assert not {"when", "did", "the", "to the", "go to"} & set(keys)
    assert keys.index("lgbtq support group") < keys.index("support")  # specific first


def test_query_keys_possessive_hyphen_and_limit() -> None:
    keys = query_keys("What is Caroline's dairy-free recipe?")
    assert {"caroline", "dairy", "recipe"} <= set(keys)
    assert "s" not in keys
    assert len(query_keys(" ".join(f"word{i}" for i in range(100)), limit=10)) == 10
    assert query_keys("what is it?") == []


def test_query_types_from_type_words() -> None:
    assert query_types("Which cities has Jon visited?") == ["Place"]
    assert query_types("Where did Caroline move from?") == ["Place"]
    assert query_types("What books and movies does Nate like?") == ["Work"]
    assert query_types("Which companies and countries did she work in?") == [
        "Organization",
        "Place",
    ]
    assert query_types("How is Jon feeling today?") == []
    assert query_types("Who is Caroline's best friend?") == []  # Person: never by type
