"""Word-level measures shared by the generator's meta and the self-check."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z][a-z']*")
_STOP = frozenset(
    """
    a about after again all also am an and any are as at be been before but by can could
    did do does doing for from get got had has have how i i'd i'll i'm i've if in into is
    it it's its just last me more my next no not now of off on once one or our out over
    should so some than that the their them then there these they this those to too up
    us very was we were what when where which while who why will with would you your
    week month today tonight tomorrow morning evening day days
    """.split()
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Lower-case words of three letters or more that are not function words."""
    return {w for w in words(text) if len(w) >= 3 and w not in _STOP}


def trigrams(text: str) -> set[tuple[str, ...]]:
    """Three-word sequences holding at least one content word."""
    tokens = words(text)
    grams = {tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)}
    return {g for g in grams if any(len(w) >= 3 and w not in _STOP for w in g)}


def shares_content_word(question: str, entries: Iterable[str]) -> bool:
    pool: set[str] = set()
    for entry in entries:
        pool |= content_words(entry)
    return bool(content_words(question) & pool)


def quoted_trigrams(question: str, entries: Iterable[str]) -> set[tuple[str, ...]]:
    """Three-word sequences the question shares with any entry (quoting, if non-empty)."""
    asked = trigrams(question)
    shared: set[tuple[str, ...]] = set()
    for entry in entries:
        shared |= asked & trigrams(entry)
    return shared
