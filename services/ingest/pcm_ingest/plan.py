"""What a write request does with each of its items, decided without touching a store:
create a memory, reinforce the stored copy of an exact repeat, or merge a near duplicate
into its twin (DESIGN §3). `plan_writes` is a pure function of what the stores were found
to hold; `pcm_ingest.writer` carries the decisions out.

Duplicates are duplicates only within one owner group (`domain.visibility.owner`): the copy
key holds the text hash and the owner, so one user's text never reinforces another's, nor
a project's a workspace memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pcm_common.domain.surprisal import distinct_events
from pcm_ingest.batch_twins import earlier_twins

# (text hash, user, scope, workspace, project): an exact copy is one of the same owner.
CopyKey = tuple[str, str, str, str, str]
Status = Literal["created", "reinforced", "merged"]


@dataclass(frozen=True)
class WriteItem:
    """One item of the request, as planning reads it."""

    key: CopyKey
    text: str
    figures_key: str  # `domain.figures.figures_key` of the figures it states
    # The id a new memory gets (an Idempotency-Key's plan); None: a fresh one.
    memory_id: str | None = None
    # Its dense vector: needed only for items with no stored copy (`fresh_items`).
    vector: Sequence[float] | None = None

    @property
    def owner(self) -> tuple[str, str, str, str]:
        return (self.key[1], self.key[2], self.key[3], self.key[4])


@dataclass(frozen=True)
class Twin:
    """The stored memory nearest to a new item that states the same figures."""

    memory_id: str
    score: float  # cosine
    text: str


@dataclass(frozen=True)
class WriteDecision:
    """What happens to item `index`.

    - created: a new memory with id `memory_id` (None: a fresh id); `replayed` when an
      earlier try of the same keyed request stored it already (only its events are owed).
    - reinforced / merged with `memory_id`: the stored memory repeated (an exact copy, or a
      near duplicate's twin; a twin deleted meanwhile leaves the item to be created).
    - reinforced / merged with `first`: the memory an earlier item of this request ends as,
      repeated once that one is stored (as if they had come one at a time).
    """

    index: int
    status: Status
    memory_id: str | None = None
    first: int | None = None
    replayed: bool = False


def fresh_items(items: Sequence[WriteItem], stored: Mapping[CopyKey, str]) -> list[int]:
    """The items that are neither a stored copy nor a later copy within the request: the
    ones to embed and to look up near duplicates for."""
    seen: set[CopyKey] = set()
    out: list[int] = []
    for i, item in enumerate(items):
        if item.key in stored or item.key in seen:
            continue
        seen.add(item.key)
        out.append(i)
    return out


def _exact(items: Sequence[WriteItem], stored: Mapping[CopyKey, str]) -> dict[int, WriteDecision]:
    """The decisions for exact copies: of a stored memory, or of an earlier item."""
    first_of: dict[CopyKey, int] = {}
    out: dict[int, WriteDecision] = {}
    for i, item in enumerate(items):
        found = stored.get(item.key)
        if found is not None and found == item.memory_id:
            out[i] = WriteDecision(i, "created", memory_id=found, replayed=True)
        elif found is not None:
            out[i] = WriteDecision(i, "reinforced", memory_id=found)
        elif item.key in first_of:
            out[i] = WriteDecision(i, "reinforced", first=first_of[item.key])
        else:
            first_of[item.key] = i
    return out


def is_twin(item: WriteItem, twin: Twin | None, min_cos: float) -> bool:
    """Whether the stored `twin` is the same event as `item`: cosine at or above `min_cos`
    and no other name or added clause (`distinct_events`)."""
    return twin is not None and twin.score >= min_cos and not distinct_events(twin.text, item.text)


def plan_writes(
    items: Sequence[WriteItem],
    stored: Mapping[CopyKey, str],
    twins: Mapping[int, Twin | None],
    *,
    min_cos: float,
) -> list[WriteDecision]:
    """One decision per item, in order.

    `stored`: the stored memory (id) of each copy key found; `twins`: for the items
    `fresh_items` names, the nearest stored memory with the same figures (or None). A fresh
    item without a stored twin that repeats an earlier one of the request (same owner and
    figures, `min_cos`, the same event) is merged into it (`batch_twins`)."""
    decided = _exact(items, stored)
    fresh = [i for i in range(len(items)) if i not in decided]
    for i in fresh:
        twin = twins.get(i)
        if twin is not None and is_twin(items[i], twin, min_cos):
            decided[i] = WriteDecision(i, "merged", memory_id=twin.memory_id)
    alone = [i for i in fresh if i not in decided]
    if any(items[i].vector is None for i in alone):
        raise ValueError("every new item needs its vector to be planned")
    repeats = earlier_twins(
        [(items[i].owner, items[i].figures_key) for i in alone],
        [items[i].vector or () for i in alone],
        [items[i].text for i in alone],
        min_cos,
    )
    for a, b in repeats.items():
        decided[alone[a]] = WriteDecision(alone[a], "merged", first=alone[b])
    for i in alone:
        decided.setdefault(i, WriteDecision(i, "created", memory_id=items[i].memory_id))
    return [decided[i] for i in range(len(items))]
