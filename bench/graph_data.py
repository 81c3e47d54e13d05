"""LoCoMo dev data for the graph measurements: turns as memories, questions, a disk cache of
embeddings and local extractions (so variants of the link scoring can be compared quickly).

Memory text follows /work/shared/data/README.md: "Speaker: text" plus the image caption.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcm_common.stores.graph import Extraction

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
    data: dict[str, Any] = json.loads(path.read_text())
    out: list[Conversation] = []
    for conv in data["conversations"]:
        sid = conv["sample_id"]
        c = conv["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in c:
            for t in c[f"session_{n}"]:
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [image: {t['blip_caption']}]"
                turns.append(Turn(_memory_id(sid, t["dia_id"]), t["dia_id"], text))
            n += 1
        qs = [
            Question(q["question_id"], q["question"], int(q["category"]), q["evidence_norm"])
            for q in conv["qa"]
            if int(q["category"]) in CATEGORIES and q.get("evidence_norm")
        ]
        out.append(Conversation(sid, turns, qs))
    return out


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
        c.question_vecs = await embedder.embed([q.text for q in c.questions])
        t0 = time.perf_counter()
        c.turn_facts = await extractor.extract_many([t.text for t in c.turns])
        extract_s += time.perf_counter() - t0
        c.question_facts = await extractor.extract_many([q.text for q in c.questions])
    await asyncio.to_thread(cache.parent.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(cache.write_bytes, pickle.dumps((convs, extract_s)))
    return convs, extract_s
