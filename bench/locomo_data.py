"""LoCoMo dev conversations as turns (one memory each) and scored questions
(/work/shared/data/README.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

SCORED_CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial) has no evidence to retrieve
_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    created_at: datetime
    episode: str


@dataclass(frozen=True)
class Question:
    qid: str
    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def last_at(self) -> datetime:
        return max(t.created_at for t in self.turns)


def parse_session_time(text: str) -> datetime:
    """LoCoMo writes session times like "1:56 pm on 8 May, 2023"; taken as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(turn: dict[str, object]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def load(
    path: Path, limit: int | None = None, turn_spacing_s: float = 0.0
) -> tuple[list[Conversation], dict[int, str]]:
    """Conversations (first ``limit``) and the category names.

    ``turn_spacing_s`` > 0 dates turn i of a session at session time + i·spacing; 0 keeps
    the protocol's single session time for every turn.
    """
    data = json.loads(path.read_text())
    names = {int(k): v for k, v in data["category_names"].items()}
    out: list[Conversation] = []
    for conv in data["conversations"][:limit]:
        sid = conv["sample_id"]
        c = conv["conversation"]
        sessions = sorted(
            int(m.group(1)) for k in c if (m := _SESSION.match(k)) and isinstance(c[k], list)
        )
        turns: list[Turn] = []
        for n in sessions:
            start = parse_session_time(c[f"session_{n}_date_time"])
            for i, t in enumerate(c[f"session_{n}"]):
                turns.append(
                    Turn(
                        dia_id=t["dia_id"],
                        text=turn_text(t),
                        created_at=start + timedelta(seconds=i * turn_spacing_s),
                        episode=f"{sid}:session_{n}",
                    )
                )
        questions = [
            Question(
                qid=q.get("question_id", f"{sid}:q{i}"),
                sample_id=sid,
                question=q["question"],
                category=int(q["category"]),
                evidence=tuple(q.get("evidence_norm") or ()),
            )
            for i, q in enumerate(conv["qa"])
            # Two questions have no usable evidence: nothing to score them on.
            if int(q["category"]) in SCORED_CATEGORIES and q.get("evidence_norm")
        ]
        out.append(Conversation(sid, turns, questions))
    return out, names


def evidence_recall(evidence: tuple[str, ...], retrieved: set[str]) -> float:
    return sum(1 for e in evidence if e in retrieved) / len(evidence)
