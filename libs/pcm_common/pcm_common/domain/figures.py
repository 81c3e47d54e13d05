"""The figures a memory states (amounts, durations, counts, times): what makes two similar
texts different events ("ran 5k in 27:10" vs "ran 5k in 41:30")."""

from __future__ import annotations

import re

from pcm_common.domain.number_words import NUMBER

# Numbers with optional currency, separators, clock/duration colons and decimal parts,
# then either a unit written onto them ("10m", "87.5kg", "7h15": part of the figure, or a
# run of 10 minutes would be the same event as one of 58) or a spaced suffix such as k,
# %, am/pm.
_FIGURE = re.compile(
    r"(?<![\w.])[$€£¥₹]?\d+(?:[.,:/-]\d+)*"
    r"(?:[a-zµ°%]+\d*(?![\w])|\s?(?:k|%|am|pm|st|nd|rd|th)(?![\w])|(?![\w]))",
    re.IGNORECASE,
)


# Identifiers with digits in them ("v4.7.2", "INV-0142", "#118"): two deploys of different
# versions, or two invoices, are two events however alike their wording.
_IDENT = re.compile(r"(?<![\w.])(?:[a-z]+[-_]?|#)\d[\w.-]*(?<![.-])", re.IGNORECASE)
# Numbers in words count too: "eighteen minutes" and "sixteen minutes" are two deploys.
_WORDS = re.compile(rf"\b(?:{NUMBER}|half|quarter)", re.IGNORECASE)


def extract_figures(text: str) -> list[str]:
    """Figures in order of appearance, normalised (lowercase, no inner spaces)."""
    found = [(m.start(), m.group(0).replace(" ", "")) for m in _FIGURE.finditer(text)]
    found += [(m.start(), re.sub(r"[\s-]+", "", m.group(0))) for m in _WORDS.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _IDENT.finditer(text)]
    return [f.lower() for _, f in sorted(found)]


def same_figures(a: list[str], b: list[str]) -> bool:
    return sorted(a) == sorted(b)


FIGURES_KEY = "figures_key"  # the payload field holding `figures_key`


def figures_key(figures: list[str]) -> str:
    """One keyword for the figures, equal exactly when `same_figures` holds (a figure
    never holds "|"): the near-duplicate search filters on it, so it scores only the
    memories that could be the same event instead of every one of the tenant's."""
    return "|".join(sorted(figures))
