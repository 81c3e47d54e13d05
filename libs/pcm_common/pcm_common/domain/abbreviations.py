"""One subject said two ways: a newer statement often shortens the words of the earlier one
("prod" for "Production", "repo" for "repository", "QA" for "Quality Assurance").
Reconsolidation (`domain.reconsolidation.judge`) compares content words, so a shortened
subject would read as another one; `expand` writes a text's short forms out in the other
text's words before the two are compared. Pure, no I/O.

Two forms are recognised, both checked against the other text only (no dictionary):

- a clipping: a word of at least `MIN_CLIP` letters that begins a longer word of the other
  text (at least `MIN_EXTRA` letters longer), plural aside ("docs" / "documentation");
- an initialism: a word of 2-5 capitals whose letters are the initials of consecutive
  content words of the other text ("CI" / "Continuous integration").
"""

from __future__ import annotations

import re

MIN_CLIP = 3
MIN_EXTRA = 2

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")
# Words no initial stands for.
_SKIP = frozenset("a an the of and or for to in on at by with is are was were our my".split())


def _clipped(word: str, longer: str) -> bool:
    w, lo = word.lower().removesuffix("s") if len(word) > MIN_CLIP else word.lower(), longer.lower()
    return len(w) >= MIN_CLIP and len(lo) >= len(w) + MIN_EXTRA and lo.startswith(w)


def _initialisms(text: str) -> dict[str, str]:
    """Each run of 2-5 consecutive content words, by its initials ("QA": "Quality Assurance")."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _SKIP]
    out: dict[str, str] = {}
    for n in range(2, 6):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            out.setdefault("".join(w[0] for w in run).upper(), " ".join(run))
    return out


def _as(word: str, full: str) -> str:
    """`full` in the case `word` was written in: a lower-case short form stays a plain word
    (a capital would read as a name)."""
    return full.lower() if word.islower() else full[0].upper() + full[1:]


def expand(text: str, other: str) -> str:
    """`text` with the short forms of the other text's words written out."""
    mine = {w.lower() for w in _WORD.findall(text)}
    theirs = [w for w in _WORD.findall(other) if w.lower() not in _SKIP]
    their_low = {w.lower() for w in theirs}
    initials = _initialisms(other)

    def full(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in their_low or low in _SKIP:
            return word
        if word.isupper() and 2 <= len(word) <= 5 and word in initials:
            return initials[word]
        for longer in theirs:
            if longer.lower() not in mine and _clipped(word, longer):
                return _as(word, longer)
        return word

    return _WORD.sub(full, text)
