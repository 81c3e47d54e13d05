"""What the detectors read: a text as plain ASCII of known positions.

A `View` drops invisible characters (zero-width space and joiners, soft hyphen, BOM: all
of Unicode's format category Cf), so that "ghp_12\u200b34..." reads as written, and maps
every other character to one ASCII character (digits of any script to 0-9, accented
letters to their base letter, other letters to "x", any space to " ", any dash to "-",
everything else to " "). Detectors then work on ASCII with patterns of linear cost (RE2,
or bounded repeats in Python's `re`), and each finding maps back to the original text
through `View.span`.

`kept` makes a further view with some characters of a view removed: `firewall.grouped`
uses it to read a key that a person wrote in groups as one token.
"""

from __future__ import annotations

import operator
import unicodedata
from dataclasses import dataclass
from itertools import compress, repeat

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
    # (compress and map run in C: a text of 50,000 zero-width spaces costs milliseconds.)
    kept = map(operator.ne, shadow, repeat(_DROP))
    return View(shadow.replace(_DROP, ""), list(compress(range(len(shadow)), kept)))


def kept(view: View, keep: bytes | bytearray) -> View:
    """`view` with only the characters whose `keep` byte is not 0; positions still map to
    the original text. (`compress` and `map` run in C: a key written in 20,000 groups is
    joined in milliseconds.)"""
    positions = list(compress(range(len(view.text)), keep))
    origin = positions if view.origin is None else list(map(view.origin.__getitem__, positions))
    return View("".join(compress(view.text, keep)), origin)
