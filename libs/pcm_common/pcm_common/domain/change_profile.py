"""What the change rules (`changes`) read of one parsed text: its content words, its slots
(the nouns and names that fill a role), its clauses and its tokens in order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from pcm_common.domain.surprisal import Tok, is_content

NAME_ROLE = "name"


class Clause(NamedTuple):
    lemmas: frozenset[str]  # content lemmas
    text: str
    figure: bool  # states a figure
    predicate: bool  # says something: a content verb or adjective
    kinds: frozenset[str] = frozenset()  # the kinds of the figures it states ("money")


@dataclass(frozen=True)
class Profile:
    """What the change rules read of one text."""

    content: frozenset[str]  # content-word lemmas
    slots: Mapping[str, str]  # slot lemma -> its role
    heads: Mapping[str, str]  # slot lemma -> the lemma of its phrase's head
    words: Mapping[str, str]  # slot lemma -> as written
    names: frozenset[str]  # slot lemmas that are names
    clauses: tuple[Clause, ...]
    # The tokens in order: lemmas with figures masked (`FIGURE`), and as written.
    sequence: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    nominal: frozenset[str] = frozenset()  # lemmas of its nouns and names, whatever role


FIGURE = "#"  # prefix of a figure's kind among a text's words


def profile(
    toks: Sequence[Tok], figures: Iterable[str] = (), stated: Sequence[tuple[str, str]] = ()
) -> Profile:
    """`figures`: the keys of the quantities the text states ("duration", "money:USD");
    they count as words ("#duration"): a routine that alternates phrasings with no word in
    common still agrees on what it measures. `stated`: (key, text as written) of each
    quantity, to tell which clause states it."""
    slots: dict[str, str] = {}
    heads: dict[str, str] = {}
    words: dict[str, str] = {}
    names: set[str] = set()
    by_clause: dict[int, list[Tok]] = {}
    for t in toks:
        by_clause.setdefault(t.sent, []).append(t)
        if not is_content(t):
            continue
        if t.is_name or (t.pos in {"NOUN", "PROPN"} and t.role):
            words.setdefault(t.lemma, t.text)
        if t.is_name:
            names.add(t.lemma)
            slots[t.lemma] = NAME_ROLE
            heads[t.lemma] = t.head or t.lemma
        elif t.pos in {"NOUN", "PROPN"} and t.role:
            slots.setdefault(t.lemma, t.role)
            heads.setdefault(t.lemma, t.head or t.lemma)
    clauses = tuple(_clause(ts, stated) for ts in by_clause.values())
    return Profile(
        content=frozenset(t.lemma for t in toks if is_content(t)) | {FIGURE + f for f in figures},
        slots=slots,
        heads=heads,
        words=words,
        names=frozenset(names),
        clauses=clauses,
        sequence=tuple(FIGURE if t.is_num else t.lemma for t in toks if t.pos != "SPACE"),
        shown=tuple(t.text for t in toks if t.pos != "SPACE"),
        nominal=frozenset(t.lemma for t in toks if t.is_name or t.pos in {"NOUN", "PROPN"}),
    )


def _clause(toks: Sequence[Tok], stated: Sequence[tuple[str, str]]) -> Clause:
    text = " ".join(t.text for t in toks if t.pos not in {"PUNCT", "SPACE"})
    bare = "".join(t.text for t in toks)
    kinds = frozenset(
        key.split(":", 1)[0] for key, shown in stated if shown.replace(" ", "") in bare
    )
    return Clause(
        frozenset(t.lemma for t in toks if is_content(t)),
        text,
        any(t.is_num for t in toks),
        any(t.pos in {"VERB", "ADJ"} and is_content(t) for t in toks),
        kinds,
    )


def words(p: Profile) -> frozenset[str]:
    """The text's content words without its figures' kinds."""
    return frozenset(w for w in p.content if not w.startswith(FIGURE))
