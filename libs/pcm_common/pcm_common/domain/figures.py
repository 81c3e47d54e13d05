"""The figures a memory states (amounts, durations, counts, times): what makes two similar
texts different events ("ran 5k in 27:10" vs "ran 5k in 41:30")."""

from __future__ import annotations

import re

# Numbers with optional currency, separators, clock/duration colons, decimal parts and
# a unit-ish suffix such as k, %, am/pm.
_FIGURE = re.compile(
    r"(?<![\w.])[$€£]?\d+(?:[.,:/-]\d+)*(?:\s?(?:k|%|am|pm|st|nd|rd|th))?(?![\w])",
    re.IGNORECASE,
)


def extract_figures(text: str) -> list[str]:
    """Figures in order of appearance, normalised (lowercase, no inner spaces)."""
    return [m.group(0).lower().replace(" ", "") for m in _FIGURE.finditer(text)]


def same_figures(a: list[str], b: list[str]) -> bool:
    return sorted(a) == sorted(b)


FIGURES_KEY = "figures_key"  # the payload field holding `figures_key`


def figures_key(figures: list[str]) -> str:
    """One keyword for the figures, equal exactly when `same_figures` holds (a figure
    never holds "|"): the near-duplicate search filters on it, so it scores only the
    memories that could be the same event instead of every one of the tenant's."""
    return "|".join(sorted(figures))
