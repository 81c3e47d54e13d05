"""LoCoMo dev data for the graph measurements: turns as memories, questions, a disk cache of
embeddings and local extractions (so variants of the link scoring can be compared quickly).

Turns and questions come from `bench.locomo_data` (one reading of the data for every
benchmark).
"""

from __future__ import annotations

import asyncio
import pickle
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bench import locomo_data
from pcm_common.stores.graph.port import Extraction

DEFAULT_DATA = Path("/work/shared/data/locomo_dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass
class Turn:
    memory_id: str
    dia_id: str
    text: str


@dataclass
class Question:
    qid: str
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    # Filled by `prepare`:
    turn_vecs: list[list[float]] = field(default_factory=list)
    question_vecs: list[list[float]] = field(default_factory=list)
    turn_facts: list[Extraction] = field(default_factory=list)
    question_facts: list[Extraction] = field(default_factory=list)


def _memory_id(sample_id: str, dia_id: str) -> str:
    # Stable UUIDs: vector stores want UUID point ids, and re-runs must agree.
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"locomo/{sample_id}/{dia_id}"))


def load(path: Path = DEFAULT_DATA) -> list[Conversation]:
    """The LoCoMo turns and scored questions as `bench.locomo_data` reads them, with stable
    memory ids."""
    convs, _ = locomo_data.load(path)
    return [
        Conversation(
            c.sample_id,
            [Turn(_memory_id(c.sample_id, t.dia_id), t.dia_id, t.text) for t in c.turns],
            [Question(q.qid, q.question, q.category, list(q.evidence)) for q in c.questions],
        )
        for c in convs
    ]


async def prepare(cache: Path, path: Path = DEFAULT_DATA) -> tuple[list[Conversation], float]:
    """Conversations with embeddings and local extractions; returns (convs, extract seconds)."""
    if await asyncio.to_thread(cache.exists):
        try:
            convs, secs = pickle.loads(await asyncio.to_thread(cache.read_bytes))
            return convs, secs
        except (ModuleNotFoundError, AttributeError, pickle.UnpicklingError):
            pass  # written by an older layout of these classes: rebuilt below
    from pcm_common.extract.local import LocalExtractor
    from pcm_common.models.embeddings import Embedder

    convs = load(path)
    embedder = Embedder()
    extractor = LocalExtractor()
    extractor.warmup()
    extract_s = 0.0
    for c in convs:
        c.turn_vecs = await embedder.embed([t.text for t in c.turns])
        c.question_vecs = await embedder.embed_queries([q.text for q in c.questions])
        t0 = time.perf_counter()
        c.turn_facts = await extractor.extract_many([t.text for t in c.turns])
        extract_s += time.perf_counter() - t0
        c.question_facts = await extractor.extract_many([q.text for q in c.questions])
    await asyncio.to_thread(cache.parent.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(cache.write_bytes, pickle.dumps((convs, extract_s)))
    return convs, extract_s
