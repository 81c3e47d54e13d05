"""Sparse lexical vectors for hybrid search (BM25-style, no model download).

Documents get BM25 term-frequency weights (saturation k1, length normalisation b against
an assumed average length); queries get weight 1 per unique term. The IDF half of BM25 is
left to Qdrant's IDF modifier on the "lexical" sparse vector, so it tracks the live corpus
instead of a frozen vocabulary. Term ids are a stable hash of the term, so encoders in
different processes and versions agree without a shared vocabulary file.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

import Stemmer

from pcm_common.stores.vectors import SparseVec

K1 = 1.2
B = 0.75
# Memories are short notes; measured in tokens kept after stopword removal.
AVG_DOC_LEN = 48.0

# Decimal numbers stay whole ("3.5", "1,200"); otherwise Unicode word runs. Apostrophes
# split words, so "don't" -> "don", "t" and "alice's" -> "alice", "s" (both stopwords).
_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)+|\w+")

# Small list on purpose: dropping only words that carry no lexical signal keeps rare
# names and numbers intact while cutting the bulk of the postings.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve don didn doesn isn wasn aren weren won
    """.split()
)


# Snowball (Porter 2) stemming, which lifts lexical recall over plural stripping
# (docs/decisions/0038-sparse-snowball-stemming.md).
_STEMMER = Stemmer.Stemmer("english")


def _stem(token: str) -> str:
    # Numbers and mixed tokens ("5k", "27:10") are kept verbatim: figures must match exactly.
    return _STEMMER.stemWord(token) if token.isalpha() else token


def tokenize(text: str) -> list[str]:
    """Lowercased, stopword-free, stemmed terms in order of appearance."""
    out: list[str] = []
    for tok in _TOKEN_RE.findall(text.lower()):
        if tok in STOPWORDS:
            continue
        out.append(_stem(tok))
    return out


def term_id(term: str) -> int:
    """Stable non-negative 31-bit id (crc32 is fixed across Python runs, unlike hash())."""
    return zlib.crc32(term.encode("utf-8")) % (2**31)


def _to_sparse(weights: dict[int, float]) -> SparseVec:
    # Sorted indices: deterministic output, and what sparse indexes expect.
    idx = sorted(weights)
    return SparseVec(indices=idx, values=[weights[i] for i in idx])


def encode_document(text: str) -> SparseVec:
    """BM25 TF component per term: tf·(k1+1) / (tf + k1·(1 − b + b·len/avg_len))."""
    terms = tokenize(text)
    if not terms:
        return SparseVec(indices=[], values=[])
    norm = K1 * (1.0 - B + B * len(terms) / AVG_DOC_LEN)
    weights: dict[int, float] = {}
    for term, tf in Counter(terms).items():
        tid = term_id(term)
        # A crc32 collision between two terms of one document: keep the larger weight.
        w = tf * (K1 + 1.0) / (tf + norm)
        weights[tid] = max(w, weights.get(tid, 0.0))
    return _to_sparse(weights)


def encode_query(text: str) -> SparseVec:
    """Weight 1 per unique term: with the IDF modifier the score is Σ idf·doc_weight."""
    return _to_sparse({term_id(t): 1.0 for t in set(tokenize(text))})
