"""Small text helpers shared by the services that quote memories to an agent."""

from __future__ import annotations

import unicodedata


def one_line(text: str) -> str:
    """Memory text is data: collapsing it to one line keeps it from forging a slot header."""
    return " ".join(text.split())


def brief(text: str, limit: int) -> str:
    """The text's opening words up to `limit` characters, with an ellipsis if cut."""
    line = one_line(text)
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return f"{cut}…"


def is_blank(text: str) -> bool:
    """Nothing visible: only whitespace and format characters (zero-width spaces and joiners,
    word joiners, byte-order marks), which `str.strip` keeps."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)
