"""The head of a long text that a truncating tokenizer would keep, found without tokenising
the whole text.

A tokenizer truncates after tokenising everything, however little the model then sees
(docs/decisions/0049-token-head.md). Cut at a word boundary, a prefix tokenises to
the same first tokens as the whole text (the normalisers used here work per character, and
pre-tokenisers split at whitespace, BERT's also at punctuation), so a prefix that already
holds `max_tokens` tokens gives the same truncated input.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# First prefix tried, in characters per token kept; doubled while it holds too few tokens.
CHARS_PER_TOKEN = 8


def _bert_punctuation(ch: str) -> bool:
    o = ord(ch)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _space(ch: str) -> bool:
    # BERT's whitespace: not str.isspace, which also holds control characters (\x1c) that
    # BERT's normaliser deletes, joining the words on either side.
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _boundary(text: str, end: int, punctuation: bool) -> int:
    """The largest i <= end with text[i] a whitespace (or, where `punctuation`, a BERT
    punctuation) character; 0 when there is none."""
    for i in range(end, 0, -1):
        ch = text[i]
        if _space(ch) or (punctuation and _bert_punctuation(ch)):
            return i
    return 0


def _splits_punctuation(tok: Any) -> bool:
    from tokenizers.pre_tokenizers import BertPreTokenizer

    return isinstance(tok.pre_tokenizer, BertPreTokenizer)


def head(tok: Any, text: str, max_tokens: int) -> str:
    """A prefix of `text` whose tokens by `tok` (a `tokenizers.Tokenizer`) begin with the
    first `max_tokens` tokens of `text`; `text` itself when it is short or has no boundary
    early enough."""
    chars = CHARS_PER_TOKEN * max_tokens
    punctuation = _splits_punctuation(tok)
    while chars < len(text):
        cut = _boundary(text, chars, punctuation)
        if cut == 0:
            return text
        prefix = text[:cut]
        if len(tok.encode(prefix, add_special_tokens=False).ids) >= max_tokens:
            return prefix
        chars *= 2
    return text
