"""Numbers written as words ("eighteen minutes", "twenty-five pages", "an hour and a
half"): their values, and a pattern that finds them, for quantities and figures alike."""

from __future__ import annotations

import re

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()

NUMBER_WORDS: dict[str, float] = {w: float(n) for n, w in enumerate(_UNITS)}
NUMBER_WORDS |= {w: float(20 + 10 * n) for n, w in enumerate(_TENS)}
NUMBER_WORDS |= {"a": 1.0, "an": 1.0, "half": 0.5, "couple": 2.0, "dozen": 12.0}

# One number in words: a tens word with an optional unit ("twenty-five", "forty two"),
# or a single word. Longest alternatives first, so "seventeen" is not read as "seven".
_SINGLE = "|".join(sorted((*_UNITS[1:], *_TENS), key=len, reverse=True))
NUMBER = rf"(?:(?:{'|'.join(_TENS)})[\s-](?:{'|'.join(_UNITS[1:10])})\b|(?:{_SINGLE})\b)"
NUMBER_RE = re.compile(rf"\b{NUMBER}", re.IGNORECASE)


def word_value(words: str) -> float | None:
    """The value of a number in words ("twenty-five" -> 25, "eighteen" -> 18)."""
    total = 0.0
    for part in re.split(r"[\s-]+", words.lower().strip()):
        if part not in NUMBER_WORDS:
            return None
        total += NUMBER_WORDS[part]
    return total
