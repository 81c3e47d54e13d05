"""Surprisal judge port (whitepaper §3.7): does a memory depart from its family's pattern?

Two implementations, chosen by configuration: `local.LocalJudge` (default: deterministic
rules and robust statistics) and `llm.LlmJudge` (any litellm provider, JSON-validated).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from pcm_common.domain.clock import as_utc
from pcm_common.domain.memory import MemoryRecord
from pcm_common.judge.features import FEATURES_FIELD


class Earlier(Protocol):
    """What a judge reads of a family member. A `MemoryRecord` has it; so does the
    lighter `FamilyMember` that the sweeper reads from a few payload fields."""

    @property
    def text(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def repeats(self) -> list[datetime]: ...


# The payload fields a `FamilyMember` is made of (`judge_toks`: the local judge's stored
# token features, `pcm_common.judge.features`).
MEMBER_FIELDS = ("text", "created_at", "repeats", FEATURES_FIELD)


@dataclass(frozen=True)
class FamilyMember:
    """A family member as judges see it: its text, its date and its recorded repeats.
    Building a whole `MemoryRecord` per member (12 per judged memory) validated every
    field of its payload only for these three to be read."""

    text: str
    created_at: datetime
    repeats: list[datetime] = field(default_factory=list)
    # What a judge stored with the member when it was judged (`Judge.stored_features`).
    features: Any = None

    @classmethod
    def of_payload(cls, payload: dict[str, Any]) -> FamilyMember:
        """From a stored payload (ISO dates, as `MemoryRecord.to_payload` writes them)."""
        return cls(
            text=str(payload["text"]),
            created_at=as_utc(datetime.fromisoformat(str(payload["created_at"]))),
            repeats=[as_utc(datetime.fromisoformat(str(r))) for r in payload.get("repeats") or []],
            features=payload.get(FEATURES_FIELD),
        )


class Verdict(BaseModel):
    """σ ∈ [0, 1]; what differs and the usual pattern, in words an agent can read."""

    score: float = Field(ge=0.0, le=1.0)
    differs: str = ""
    usual: str = ""
    kind: str = ""  # value | category | content | "" (informational; not part of the port)
    # The family member (its position in the family the judge was given) that the memory
    # updates, when the judge decides supersession (`Judge.decides_supersession`).
    updates: int | None = None


class Judge(ABC):
    # Whether verdicts say which family member a memory updates (`Verdict.updates`); the
    # sweeper then follows the judge, else its supersession rules.
    decides_supersession: bool = False

    @abstractmethod
    async def judge(self, memory: MemoryRecord, family: Sequence[Earlier]) -> Verdict:
        """Judge `memory` against its family (earlier memories, nearest first). Raises on a
        model error or timeout: the caller leaves the memory unjudged and retries later."""

    async def judge_many(
        self,
        items: Sequence[tuple[MemoryRecord, Sequence[Earlier]]],
        timeout_s: float,
        concurrency: int = 4,
    ) -> list[Verdict | Exception]:
        """`judge` for each (memory, family), up to `concurrency` at once, each verdict or
        error on its own (an error leaves that memory unjudged), each call limited to
        `timeout_s`. A judge whose verdicts are local CPU work can do them in one go."""
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(memory: MemoryRecord, family: Sequence[Earlier]) -> Verdict | Exception:
            try:
                async with gate:
                    return await asyncio.wait_for(self.judge(memory, family), timeout=timeout_s)
            except Exception as exc:
                return exc

        return list(await asyncio.gather(*(one(m, f) for m, f in items)))

    def stored_features(self, memory: MemoryRecord) -> dict[str, Any]:
        """Payload fields to keep with `memory` once judged, which this judge reads back
        from family members (`FamilyMember.features`) to save work; none by default."""
        return {}

    async def prepare(  # noqa: B027 - optional hook: most judges have nothing to share
        self, judgements: Sequence[tuple[MemoryRecord, Sequence[Earlier]]]
    ) -> None:
        """A hint that `judge` will be called for these (memory, family) pairs next: a judge
        whose verdicts share work (parsing the same family texts) can do it once, for all
        of them. Optional; the verdicts must not depend on it."""


def make_judge(kind: str = "local", **kwargs: Any) -> Judge:
    """`local` (default) or `llm` (kwargs go to `LlmJudge`)."""
    if kind == "local":
        from pcm_common.judge.local import LocalJudge

        return LocalJudge()
    if kind == "llm":
        from pcm_common.judge.llm import LlmJudge

        return LlmJudge(**kwargs)
    raise ValueError(f"unknown judge {kind!r}: local or llm")


__all__ = ["MEMBER_FIELDS", "Earlier", "FamilyMember", "Judge", "Verdict", "make_judge"]
