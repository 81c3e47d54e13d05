"""What becomes of a distilled fact (`domain.distil`) when memories it came from are
deleted: by the API's DELETE, a scope's retention period, or an erasure. Pure rules, no
I/O; `pcm_common.data.derived_facts` applies them.

- A fact none of whose sources was deleted is left alone.
- A fact whose every source is gone goes too: nothing stored says it any more, and a
  user who deleted what they said must not keep what was drawn from it.
- A fact that lost some sources keeps the others in `sources` and its text as it is. A
  fact's sources are the texts that each gave the statement (the graph extractor's
  relation of one text, or the lines a model cited for it, `domain.distil.gather`), so
  the ones left still state it. Distilling it again would need the fact source (a model
  call) on the delete path, which must not wait on or fail with a model.
- An erasure drops every fact with any erased source, also one that other sources
  still state: an erasure promises that nothing derived from the erased data is kept,
  and a model's fact may join what several lines said.

Retention: a fact goes with its sources, so the governance job does not date a fact that
still has a stored source; a fact with none stored (distilled from captures the gate
skipped, which are never stored) is dated by itself (`dated_alone`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum


class Action(StrEnum):
    KEEP = "keep"
    TRIM = "trim"
    DROP = "drop"


@dataclass(frozen=True)
class Fate:
    action: Action
    sources: tuple[str, ...]  # what the fact keeps (all of them for KEEP, none for DROP)
    removed: tuple[str, ...] = ()  # the deleted ones it named


def after_deletion(sources: Sequence[str], gone: Collection[str], *, erasure: bool = False) -> Fate:
    """The fate of a fact with these `sources` once the memories in `gone` are deleted
    (module docstring). A fact without sources has nothing to lose: kept."""
    removed = tuple(dict.fromkeys(s for s in sources if s in gone))
    if not removed:
        return Fate(Action.KEEP, tuple(sources))
    left = tuple(dict.fromkeys(s for s in sources if s not in gone))
    if erasure or not left:
        return Fate(Action.DROP, (), removed)
    return Fate(Action.TRIM, left, removed)


def dated_alone(sources: Sequence[str], stored: Collection[str]) -> bool:
    """Whether retention dates a fact by its own time: none of its sources is stored."""
    return not any(s in stored for s in sources)
