"""Parses shared between the local judge and the local extractor of one process: a primed
batch is parsed once, heard by the listeners once, and taken (not re-parsed) by the
extractor."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pcm_common.domain.memory import MemoryRecord, Strength
from pcm_common.extract import parsing
from pcm_common.extract.local import LocalExtractor
from pcm_common.extract.parsing import ParseExchange
from pcm_common.judge import local as judge_local

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
    # Parsed in this process, where they can be counted (`test_parse_process`: a child's
    # parses are the same docs).
    monkeypatch.setenv("PCM_PARSE_PROCESS", "false")
    pipeline = CountingPipeline(parsing.load_pipeline())
    monkeypatch.setattr(parsing, "load_pipeline", lambda: pipeline)
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
    monkeypatch.setattr(parsing, "SHARED_DOCS", exchange)
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


def test_prepared_judgements_parse_their_texts_once_in_one_batch(
    counting: CountingPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local judge's `prepare` parses every unseen text of the coming verdicts in one
    batch; the verdicts then parse nothing (family members shared between judgements
    included)."""
    monkeypatch.setattr(judge_local, "_PARSER", judge_local._Parser())
    monkeypatch.setattr(parsing, "SHARED_DOCS", ParseExchange())
    judge = judge_local.LocalJudge()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def record(n: int, text: str) -> MemoryRecord:
        at = t0 + timedelta(days=n)
        return MemoryRecord(
            id=f"m{n}",
            tenant="t",
            text=text,
            text_hash=text,
            created_at=at,
            ingested_at=at,
            strength=Strength(s_ref=0.6, t_ref=at),
        )

    family = [record(n, f"Alice ran {n + 3} km along the river on Monday.") for n in range(5)]
    first = record(10, "Alice ran 40 km along the river on Monday.")
    second = record(11, "Alice swam 2 km in the lake on Monday.")

    async def run() -> None:
        await judge.prepare([(first, family), (second, family[:4])])
        assert counting.parsed == [first.text, *(f.text for f in family), second.text]
        await judge.judge(first, family)
        await judge.judge(second, family[:4])

    asyncio.run(run())
    assert len(counting.parsed) == 7  # nothing parsed again by the verdicts


def test_concurrent_warms_parse_a_text_once(
    counting: CountingPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two batches of judgements (the sweeper reads two at once) warming the same family
    members: the second waits on the pipeline lock and then finds them cached. It parsed
    them again when the first filled its cache after letting the lock go."""
    import threading
    import time

    monkeypatch.setattr(parsing, "SHARED_DOCS", ParseExchange())
    parser = judge_local._Parser()
    texts = [f"Alice ran {n} km along the river on Monday." for n in range(3, 40)]
    # The first warm dawdles over its tokens, where the other one got in before.
    real_toks = judge_local._toks
    slowed: list[bool] = []

    def slow_toks(doc: Any, lemmatizer: Any) -> Any:
        if not slowed:
            slowed.append(True)
            time.sleep(0.3)
        return real_toks(doc, lemmatizer)

    monkeypatch.setattr(judge_local, "_toks", slow_toks)
    started = threading.Barrier(2)
    failed: list[BaseException] = []

    def warm() -> None:
        started.wait()
        try:
            parser.warm(texts)
        except BaseException as exc:  # a thread's error would otherwise only be warned of
            failed.append(exc)

    threads = [threading.Thread(target=warm) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    assert slowed
    assert sorted(counting.parsed) == sorted(texts)  # each once
    assert parser.missing(texts) == []
