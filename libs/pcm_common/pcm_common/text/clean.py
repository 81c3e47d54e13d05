"""Small text helpers shared by the services that quote memories to an agent."""

from __future__ import annotations

import unicodedata
from typing import Any

from pydantic import BaseModel, model_validator


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


def has_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character in any string, keys included (iterative:
    a body nests as deep as the JSON decoder allows)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class NulFree(BaseModel):
    """A request body with no NUL character in any string: names and texts end up in
    payload keywords, graph properties and C strings, where NUL ends or breaks them."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        if has_nul(data):
            raise ValueError("NUL characters (\\u0000) are not accepted")
        return data


def is_blank(text: str) -> bool:
    """Nothing visible: only whitespace and format characters (zero-width spaces and joiners,
    word joiners, byte-order marks), which `str.strip` keeps."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)
