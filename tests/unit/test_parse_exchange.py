"""Parses shared between the local judge and the local extractor of one process: a primed
batch is parsed once, heard by the listeners once, and taken (not re-parsed) by the
extractor."""

from __future__ import annotations

from typing import Any

import pytest

from pcm_common.extract import local
from pcm_common.extract.local import LocalExtractor, ParseExchange

TEXT = "Alice flew to Berlin on Monday and stays for 3 nights."
TURNS = "Bob: we moved to Postgres\nCarol: nice"


class CountingPipeline:
    """The real pipeline, counting the texts it parses."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self.parsed: list[str] = []

    def pipe(self, texts: Any, **kw: Any) -> Any:
        texts = list(texts)
        self.parsed += texts
        return self.nlp.pipe(texts, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nlp, name)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingPipeline:
    pipeline = CountingPipeline(local.load_pipeline())
    monkeypatch.setattr(local, "load_pipeline", lambda: pipeline)
    return pipeline


def test_prime_needs_both_sides(counting: CountingPipeline) -> None:
    exchange = ParseExchange()
    assert exchange.prime([TEXT]) == 0  # no extractor, no listener: nothing to share
    exchange.wanted = True
    assert exchange.prime([TEXT]) == 0  # no listener either
    assert counting.parsed == []


def test_primed_parse_is_heard_once_and_taken_once(counting: CountingPipeline) -> None:
    exchange = ParseExchange()
    exchange.wanted = True
    heard: list[str] = []
    exchange.listeners.append(lambda text, doc: heard.append(text))
    # Speaker turns are parsed per segment by the extractor: not shareable.
    assert exchange.prime([TEXT, TEXT, TURNS]) == 1
    assert exchange.prime([TEXT]) == 0  # already waiting for the extractor
    assert heard == [TEXT]
    assert counting.parsed == [TEXT]
    doc = exchange.take(TEXT)
    assert doc is not None and doc.text == TEXT
    assert exchange.take(TEXT) is None
    assert exchange.prime([TEXT]) == 0  # the listeners have it already


def test_extractor_takes_the_primed_parse(
    counting: CountingPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    exchange = ParseExchange()
    monkeypatch.setattr(local, "SHARED_DOCS", exchange)
    extractor = LocalExtractor()  # wants parses from now on
    exchange.listeners.append(lambda text, doc: None)
    fresh = extractor.extract_many_sync([TEXT])[0]
    assert counting.parsed == [TEXT]
    assert exchange.prime([TEXT]) == 0  # the extractor's parse was offered already

    other = "Bob cooked ramen for 4 people at the Friday dinner."
    assert exchange.prime([other]) == 1
    again = extractor.extract_many_sync([TEXT, other])
    # TEXT parsed again (its parse was used up), `other` taken from the exchange.
    assert counting.parsed == [TEXT, other, TEXT]
    assert again[0] == fresh
    assert exchange.take(other) is None
