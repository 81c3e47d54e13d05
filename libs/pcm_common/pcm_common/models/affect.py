"""Affect tags of a text (`pcm_common.domain.affect`): valence from VADER (the
`vaderSentiment` package, its lexicon shipped inside it; ~0.1 ms a short text), arousal and
complexity from the text's form. Loaded once per process on first use (~20 ms)."""

from __future__ import annotations

from functools import cache

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from pcm_common.domain.affect import tag
from pcm_common.domain.memory import Affect

# VADER looks at the opening of a long text only: its cost grows with the length.
MAX_CHARS = 2_000


@cache
def _analyzer() -> SentimentIntensityAnalyzer:
    return SentimentIntensityAnalyzer()


def classify(text: str) -> Affect:
    head = text[:MAX_CHARS]
    valence = float(_analyzer().polarity_scores(head)["compound"])
    return tag(head, valence)
