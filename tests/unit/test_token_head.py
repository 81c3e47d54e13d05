"""`token_head.head`: the prefix it keeps tokenises, after truncation, to exactly what the
whole text does, for the shapes that make the cut hard (no spaces, punctuation runs,
control and zero-width characters that BERT's normaliser deletes, wide spaces, CJK)."""

from __future__ import annotations

import random

import pytest

from pcm_common.models import local_minilm
from pcm_common.models.token_head import head

ALPHABET = list("abcdeé ü.,-!?\t\n\r\x1c\u200b\u3000中文ß'\"()0123456789 ")


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    chars = "".join(rng.choice(ALPHABET) for _ in range(rng.choice([2_500, 6_000, 20_000])))
    words = [
        "".join(rng.choice("abcxyzé") for _ in range(rng.randint(1, 150)))
        for _ in range(rng.randint(10, 2_000))
    ]
    joined = rng.choice([" ", "-", "  ", "\n", "\x1c"]).join(words)
    return [chars, joined]


@pytest.mark.parametrize("seed", range(40))
def test_head_tokenises_like_the_whole_text(seed: int) -> None:
    tok = local_minilm.tokenizer()
    for text in _texts(seed):
        kept = head(tok, text, local_minilm.MAX_TOKENS)
        assert text.startswith(kept)
        assert tok.encode(kept).ids == tok.encode(text).ids


@pytest.mark.parametrize(
    "text",
    ["sk-" * 33_333, "a." * 49_999, "ab1c " * 20_000, "word " * 20_000],
)
def test_long_texts_are_cut(text: str) -> None:
    tok = local_minilm.tokenizer()
    kept = head(tok, text, local_minilm.MAX_TOKENS)
    assert len(kept) < 10_000
    assert tok.encode(kept).ids == tok.encode(text).ids


def test_short_or_unbroken_texts_are_kept_whole() -> None:
    tok = local_minilm.tokenizer()
    assert head(tok, "a short note.", local_minilm.MAX_TOKENS) == "a short note."
    assert head(tok, "7" * 100_000, local_minilm.MAX_TOKENS) == "7" * 100_000
