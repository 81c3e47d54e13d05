"""Facts distilled by consolidation (mnemos SleepDaemon; issue 36, item 5).

Pure rules, no I/O. A *fact* is a short statement drawn from settled episodes and from the
captures the gate skipped (`stores.redis.capture_buffer`), stored as a memory of its
own with `kind: "fact"`, `source: "consolidation"` and the ids it came from (`sources`).
The raw memories stay (the whitepaper's §5.7: summaries in place of the turns cost
accuracy); a fact is one more, shorter way to reach them.

- Without a model, a fact is one relation of the graph extractor rendered as a sentence
  (`statement`: "Bob Smith works at Microsoft."), so a fact says no more than a rule
  found in its source's text.
- The same statement of one owner is one fact (`fact_id`, from the normalised text):
  distilling again merges sources and never stores it twice; a near copy (cosine at or
  above `DUPLICATE_COS` with a stored fact of the owner) adds its sources to that fact,
  unless both render relations and the relations differ (`distinct`).
- A fact is superseded as any memory is (`domain.supersession`), and also when a newer
  fact gives a single-valued relation of the same subject another value (`replaces`:
  "Alice lives in Munich." after "Alice lives in Berlin.").
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pcm_common.stores.graph.port import Relation

KIND = "fact"
DUPLICATE_COS = 0.92  # *start*: rewordings of one fact; two facts of a subject sit lower
MAX_CHARS = 300  # a fact is short: a longer model answer is not kept
NAMESPACE = uuid.UUID("0b7a3f2e-51d4-5c1e-8f7e-2d6c4b1a9e30")

# How each relation family reads in a sentence.
_VERBS: dict[str, str] = {
    "KNOWS": "knows",
    "FAMILY_OF": "is family of",
    "WORKS_AT": "works at",
    "MEMBER_OF": "is a member of",
    "LIVES_IN": "lives in",
    "VISITED": "visited",
    "LOCATED_IN": "is located in",
    "DOES": "does",
    "ATTENDED": "attended",
    "LIKES": "likes",
    "DISLIKES": "dislikes",
    "PREFERS": "prefers",
    "OWNS": "owns",
    "USES": "uses",
    "CREATED": "created",
    "WORKS_ON": "works on",
    "DEPENDS_ON": "depends on",
    "PART_OF": "is part of",
    "REPLACES": "replaces",
    "DECIDED": "decided",
    "CAUSED": "caused",
    "PLANS": "plans",
    "STUDIES": "studies",
    "HAPPENED_ON": "happened on",
    "IS_A": "is a",
}
# A subject has one value of these at a time: a newer one replaces the older.
SINGLE_VALUED = frozenset({"WORKS_AT", "LIVES_IN", "LOCATED_IN"})


@dataclass(frozen=True)
class Source:
    """A text a fact may come from: a stored memory or a skipped capture."""

    id: str
    text: str
    created_ts: float


@dataclass
class Candidate:
    """A statement and what it came from, before it is stored."""

    text: str
    sources: list[str] = field(default_factory=list)
    latest_ts: float = 0.0
    # (subject key, relation family, object key) when it renders a relation.
    relation: tuple[str, str, str] | None = None


def statement(rel: Relation) -> str | None:
    """A relation as a sentence, or None for a family with no reading."""
    verb = _VERBS.get(rel.type)
    if verb is None:
        return None
    obj = rel.target.name
    if rel.type == "IS_A" and obj[:1].lower() in "aeiou":
        verb = "is an"
    return f"{rel.source.name} {verb} {obj}."


def normalise(text: str) -> str:
    """Case, accents, spacing and closing punctuation do not make another fact."""
    flat = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[.!?\s]+$", "", flat).split())


def fact_id(tenant: str, owner: Sequence[str], text: str) -> str:
    """Deterministic id of one owner's fact: the same statement is the same point."""
    return str(uuid.uuid5(NAMESPACE, "\x1f".join([tenant, *owner, normalise(text)])))


def clean(text: str) -> str | None:
    """A model's statement as a fact's text, or None when it is none (empty, too long)."""
    one = " ".join(text.split())
    if not one or len(one) > MAX_CHARS:
        return None
    return one if one[-1] in ".!?" else one + "."


def gather(found: Iterable[tuple[str, Source, tuple[str, str, str] | None]]) -> list[Candidate]:
    """One candidate per normalised statement, with every source that gave it, in the
    order first seen."""
    out: dict[str, Candidate] = {}
    for text, src, relation in found:
        key = normalise(text)
        cand = out.setdefault(key, Candidate(text=text, relation=relation))
        if src.id not in cand.sources:
            cand.sources.append(src.id)
        cand.latest_ts = max(cand.latest_ts, src.created_ts)
    return list(out.values())


def relation_of(rel: Relation) -> tuple[str, str, str]:
    return (rel.source.key, rel.type, rel.target.key)


def replaces(new: tuple[str, str, str] | None, old: Sequence[str] | None) -> bool:
    """Whether a newer fact's relation gives the older one's single-valued relation of the
    same subject another value."""
    if new is None or not old or len(old) != 3:
        return False
    return new[1] in SINGLE_VALUED and new[:2] == tuple(old[:2]) and new[2] != old[2]


def distinct(new: tuple[str, str, str] | None, old: Sequence[str] | None) -> bool:
    """Whether two facts that both render a relation say different things: the rewording
    check (`DUPLICATE_COS`) must not merge "Alice lives in Munich." into "Alice lives in
    Berlin.", whose sentences sit closer than most rewordings."""
    if new is None or not old or len(old) != 3:
        return False
    return tuple(new) != tuple(old)


def merged_sources(existing: Sequence[str], more: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*existing, *more]))
