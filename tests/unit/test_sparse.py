"""Sparse lexical encoder: tokens, stable ids, BM25 document weights, query weights."""

from __future__ import annotations

import subprocess
import sys
import zlib

import pytest

from pcm_common.models.sparse import (
    AVG_DOC_LEN,
    K1,
    B,
    encode_document,
    encode_query,
    term_id,
    tokenize,
)


def weights(text: str) -> dict[int, float]:
    v = encode_document(text)
    return dict(zip(v.indices, v.values, strict=True))


def test_tokenize_lowercases_drops_stopwords_and_stems() -> None:
    assert tokenize("The Meetings with Alice's TEAM, and the policies!") == [
        "meet",
        "alic",
        "team",
        "polici",
    ]
    # Inflections meet on one stem, so "painted" in a memory matches "painting" in a query.
    assert tokenize("painted painting paints") == ["paint"] * 3
    assert tokenize("Don't go to the bus") == ["go", "bus"]


def test_tokenize_keeps_numbers_and_unicode_words() -> None:
    assert tokenize("Paid $1,200.50 on 2024-03-05 for 3.5 GPUs") == [
        "paid",
        "1,200.50",
        "2024",
        "03",
        "05",
        "3.5",
        "gpus",
    ]
    assert tokenize("Café Zoë in Zürich") == ["café", "zoë", "zürich"]


def test_term_ids_are_stable_31_bit_crc32() -> None:
    assert term_id("alice") == zlib.crc32(b"alice") % 2**31
    assert 0 <= term_id("zürich") < 2**31
    # Same ids in a fresh interpreter (hash() randomisation must not leak in).
    code = "from pcm_common.models.sparse import term_id; print(term_id('quillinan'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == term_id("quillinan")


def test_document_weights_follow_bm25_tf_saturation() -> None:
    # One document with tf(alpha)=3, tf(beta)=1 among 4 tokens.
    w = weights("alpha alpha alpha beta")
    norm = K1 * (1 - B + B * 4 / AVG_DOC_LEN)
    assert w[term_id("alpha")] == pytest.approx(3 * (K1 + 1) / (3 + norm))
    assert w[term_id("beta")] == pytest.approx(1 * (K1 + 1) / (1 + norm))
    # Saturation: more repeats add less and never exceed k1 + 1.
    many = weights(" ".join(["alpha"] * 200))[term_id("alpha")]
    assert w[term_id("alpha")] < many < K1 + 1


def test_document_length_normalisation() -> None:
    short = weights("zephyr budget")[term_id("zephyr")]
    long = weights("zephyr budget " + " ".join(f"word{i}" for i in range(100)))[term_id("zephyr")]
    assert short > long


def test_indices_sorted_unique_and_empty_text() -> None:
    v = encode_document("beta alpha gamma alpha")
    assert v.indices == sorted(set(v.indices))
    assert len(v.indices) == len(v.values) == 3
    assert encode_document("the of and").indices == []
    assert encode_query("").indices == []


def test_query_weights_are_one_per_unique_term() -> None:
    q = encode_query("Budget budget BUDGETS for Quillinan")
    assert sorted(q.indices) == sorted({term_id("budget"), term_id("quillinan")})
    assert q.values == [1.0, 1.0]
    # Query and document terms agree, so a lexical match is possible.
    assert set(q.indices) <= set(encode_document("Quillinan's budgets").indices)
