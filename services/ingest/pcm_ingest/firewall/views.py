"""What the detectors read: a text as plain ASCII of known positions.

A `View` drops invisible characters (zero-width space and joiners, soft hyphen, BOM: all
of Unicode's format category Cf), so that "ghp_12\u200b34..." reads as written, and maps
every other character to one ASCII character (digits of any script to 0-9, accented
letters to their base letter, other letters to "x", any space to " ", any dash to "-",
everything else to " "). Detectors then work on ASCII with patterns of linear cost (RE2,
or bounded repeats in Python's `re`), and each finding maps back to the original text
through `View.span`.

`joined` makes a second view for secrets that a person wrote in groups ("AKIA IOSF ODNN
7EXA MPLE", "ghp_Ab3d 9xYz ..."): runs of equal-length groups that mix letters and digits
are joined back into one token.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Marks a character the view drops (an input NUL is mapped to a space first).
_DROP = "\x00"


def _ascii_of(ch: str) -> str:
    category = unicodedata.category(ch)
    if category == "Cf":
        return _DROP
    if category == "Nd":
        return str(unicodedata.digit(ch))
    if category == "Zs":
        return " "
    if category == "Pd":
        return "-"
    base = unicodedata.normalize("NFKD", ch)[:1]
    if base.isascii() and base.isprintable() and base != "":
        return base  # é -> e, fullwidth "Ａ" -> "A", "＋" -> "+"
    if category.startswith("L") and ord(ch) < 0x2E80:
        return "x"  # a letter of an alphabet (Greek, Cyrillic, ...): still part of a word
    return " "  # CJK, symbols, marks: a separator, as a space would be


class _AsciiTable(dict[int, str]):
    """`str.translate` table, filled on first sight of each code point."""

    def __missing__(self, code: int) -> str:
        value = " " if code == 0 else chr(code) if code < 128 else _ascii_of(chr(code))
        self[code] = value
        return value


_TABLE = _AsciiTable()


@dataclass(frozen=True)
class View:
    """`text`: ASCII; `origin[i]`: where `text[i]` stands in the original (None: same
    place)."""

    text: str
    origin: list[int] | None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """A span of `text` as a span of the original (dropped characters inside it are
        part of it)."""
        if self.origin is None or start >= end:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def view_of(text: str) -> View:
    if text.isascii() and _DROP not in text:
        return View(text, None)
    shadow = text.translate(_TABLE)
    if _DROP not in shadow:
        return View(shadow, None)
    origin = [i for i, c in enumerate(shadow) if c != _DROP]
    return View(shadow.replace(_DROP, ""), origin)


# Runs of short groups separated by single spaces: candidates for a chunked token. (In
# Python's `re`: prose is full of such runs, and its matches cost a tenth of RE2's. Each
# group's end is forced by a space, so a start costs at most a group's length.)
_GROUP_RUN = re.compile(r"(?<!\S)[A-Za-z0-9_+/=.-]{1,16}(?: [A-Za-z0-9_+/=.-]{1,16}){2,}(?!\S)")
# A group that mixes letters and digits, or has a capital after a small letter: runs
# without one (prose) are skipped at once.
_MIXED = re.compile(r"[A-Za-z][^ ]{0,15}[0-9]|[0-9][^ ]{0,15}[A-Za-z]|[a-z][^ ]{0,15}[A-Z]")
_GROUP_SIZES = range(3, 9)  # how people chunk a key: fours, fives, eights
_MIN_GROUPS = 3


def _mixed(group: str) -> bool:
    """Letters and digits, or capitals inside lower case: a key's chunk, not a word."""
    return _MIXED.search(group) is not None


def _keyish(group: str) -> bool:
    """A head or tail group that may belong to a key ("ghp_Ab3d", "Qz"), not a word."""
    return any(c.isdigit() or c in "_-" for c in group) or any(c.isupper() for c in group[1:])


def _chunked(groups: list[str]) -> list[tuple[int, int]]:
    """[first, last] group indexes of each chunked token in one run of groups: groups of
    one size (3-8), with a key-like head and a shorter key-like tail where they are there;
    three groups at least, and one of them mixes letters and digits (prose does not: "the
    cat sat and ran")."""
    found: list[tuple[int, int]] = []
    i, taken = 0, -1  # taken: the last group of the previous token
    while i < len(groups):
        size, j = len(groups[i]), i
        while j + 1 < len(groups) and len(groups[j + 1]) == size:
            j += 1
        first, last = i, j
        # Words of the same size around a key ("with", "then") are not part of it.
        while first < last and not _keyish(groups[first]):
            first += 1
        while last > first and not _keyish(groups[last]):
            last -= 1
        if first - 1 > taken and _keyish(groups[first - 1]):
            first -= 1
        if last + 1 < len(groups) and len(groups[last + 1]) < size and _keyish(groups[last + 1]):
            last += 1
        if (
            size in _GROUP_SIZES
            and last - first + 1 >= _MIN_GROUPS
            and any(_mixed(g) for g in groups[first : last + 1])
        ):
            found.append((first, last))
            taken, i = last, last + 1
        else:
            i = j + 1
    return found


def joined(view: View) -> View | None:
    """`view` with the spaces inside chunked tokens removed, or None when it has none."""
    drop: list[int] = []  # positions in view.text of the spaces to remove
    for m in _GROUP_RUN.finditer(view.text):
        if not _MIXED.search(m.group()):
            continue
        groups = m.group().split(" ")
        starts = [m.start()]
        for g in groups[:-1]:
            starts.append(starts[-1] + len(g) + 1)
        for first, last in _chunked(groups):
            drop += [starts[k] - 1 for k in range(first + 1, last + 1)]
    if not drop:
        return None
    dropped = set(drop)
    keep = [i for i in range(len(view.text)) if i not in dropped]
    text = "".join(view.text[i] for i in keep)
    origin = keep if view.origin is None else [view.origin[i] for i in keep]
    return View(text, origin)
