"""The figures that make two look-alike texts different events (`domain.figures`)."""

from __future__ import annotations

import pytest

from pcm_common.domain.figures import extract_figures, figures_key, same_figures


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # A unit written onto the number is part of the figure: these were one event
        # when "10m" and "58m" both read as nothing and "87.5kg" as "87".
        ("gym @ IronWorks 10m, top squat 87.5kg", "gym @ IronWorks 58m, top squat 87.5kg"),
        ("Slept 7h15 last night", "Slept 5h40 last night"),
        ("Weighed 71.3kg", "Weighed 71.8kg"),
        ("Boiled 2L of water", "Boiled 3L of water"),
    ],
)
def test_joined_units_tell_events_apart(a: str, b: str) -> None:
    assert not same_figures(extract_figures(a), extract_figures(b))
    assert figures_key(extract_figures(a)) != figures_key(extract_figures(b))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gym @ IronWorks 10m, top squat 87.5kg", ["10m", "87.5kg"]),
        ("ran 5k in 27:10", ["5k", "27:10"]),
        ("paid $45.10 at 3pm on the 2nd", ["$45.10", "3pm", "2nd"]),
        ("Paid ¥9,800 and ₹1,20,000", ["¥9,800", "₹1,20,000"]),
        ("2,100 ml of water", ["2,100"]),
        ("no numbers here", []),
    ],
)
def test_figures_in_order(text: str, expected: list[str]) -> None:
    assert extract_figures(text) == expected


def test_the_same_event_reworded_keeps_its_figures() -> None:
    a = extract_figures("Ran 5k in 27:10 along the canal")
    b = extract_figures("5k along the canal, 27:10")
    assert same_figures(a, b)


def test_numbers_in_words_are_figures() -> None:
    a = extract_figures("Another deploy (v4.7.4) to us-east-2, eighteen minutes.")
    b = extract_figures("Another deploy (v4.7.5) to us-east-2, sixteen minutes.")
    assert "eighteen" in a and not same_figures(a, b)
    assert extract_figures("twenty-five pages") == ["twentyfive"]
    assert not same_figures(
        extract_figures("an hour and a half"), extract_figures("an hour and a quarter")
    )


def test_identifiers_with_digits_are_figures() -> None:
    a = extract_figures("Another billing-api deploy (v4.7.2) to us-east-2, eighteen minutes.")
    b = extract_figures("Another billing-api deploy (v4.5.4) to us-east-2, eighteen minutes.")
    assert "v4.7.2" in a and not same_figures(a, b)
    assert not same_figures(extract_figures("Sent INV-0141"), extract_figures("Sent INV-0142"))
