"""A value restated with another verb: "Our plan costs $29/month" / "the plan is
$39/month", "I take 10mg of X daily" / "the doctor put me on 20mg of X". The relation
words change freely, so `slots.replacement` (which keeps them) misses these; what marks
the same slot is the value itself: a figure of the same form (currency, unit, digit
groups) counting the same noun, or the same name before it ("Postgres 13" / "Postgres
16"). Pure, no I/O; `domain.reconsolidation.judge` uses it with its sibling-subject and
tense guards.

A value matches another (`same_slot`) when

- their forms agree: digits aside, the same currency, unit and separators ("$29/month",
  "$39/month"; "10mg", "20mg"; "4.2.1", "4.3.0"; "us-east-1", "eu-west-2" as letters,
  digits and dashes); number words ("two", "third") only with the noun they count;
- and they count the same noun ("6 pods" / "9 pods"; "64GB of RAM" / "128GB of RAM"),
  or, where the earlier one counts no noun, follow the same word ("Node 18" / "Node 22")
  or are of a form distinctive enough alone (a currency, a unit, digit groups: "4.2.1");
- and neither is a share of its noun ("40GB of its RAM": part of it, another fact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RAW = re.compile(r"\S+")
_TRIM = "\"'()[],;:!?"
_NUMBER = re.compile(
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"a\s+dozen|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"\d+(?:st|nd|rd|th)",
    re.IGNORECASE,
)
_UNIT = re.compile(r"(?:second|minute|hour|day|week|month|year|percent|time|kg|gb|mb|tb|km|mile)s?")
# How far before a figure its noun may stand.
_NEAR = 3
# Words passed over between a figure and the noun it counts ("10mg of lisinopril").
_BETWEEN = frozenset("of a an the per".split())
# A possessive before the noun makes the figure a share of it ("40GB of its RAM").
_POSSESSIVE = frozenset("its their our my his her your".split())
# Words that are no noun or name (a figure at a clause's end, a verb's helpers).
_FUNCTION = frozenset(
    """a an the and or but of to in on at for from by with as is are was were be been it
    this that these those we our i my you your he his she her they their its now just
    also so very than then into about over after before up down out off still all any
    some only per via around roughly about approximately nearly almost since until""".split()
)


def _clean(tok: str) -> str:
    tok = tok.strip(_TRIM)
    # A sentence's full stop is no part of the value ("version 4.2.1.").
    return tok[:-1] if tok.endswith(".") else tok


def _stem(word: str) -> str:
    w = word.lower().removesuffix("'s")
    for suffix in ("es", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("ss"):
            return w[: -len(suffix)]
    return w


_CLOCK = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm)|\d{1,2}:\d{2}", re.IGNORECASE)


def _form(tok: str) -> str | None:
    """The value's form with its digits abstracted, or None for a word that is no value.
    A clock time is none here: its verb is its relation ("departs at 6:20" / "lands at
    9:45"), so only `slots` (which keeps the verb) reads it."""
    if _CLOCK.fullmatch(tok):
        return None
    if tok[:1].isdigit() or (tok[:1] in "$€£" and tok[1:2].isdigit()):
        # Units and currency stay literal: "$29/month" and "$29/seat" are other slots.
        return re.sub(r"\d+", "9", tok.lower())
    if any(c.isdigit() for c in tok) or (tok.startswith("/") and len(tok) > 1):
        # Identifiers, regions and paths: letters and digits abstracted, separators kept.
        return re.sub(r"[a-z]+", "a", re.sub(r"\d+", "9", tok.lower()))
    if _NUMBER.fullmatch(tok):
        return "#"
    return None


def _amount(form: str) -> bool:
    """A form that measures: a currency, a percentage or a unit after the figure."""
    return form[:1] in "$€£" or bool(re.fullmatch(r"[\d9.,]+(?:%|[a-z]+)", form))


def _distinctive(form: str) -> bool:
    """A form that says which slot it fills alone: a currency, a unit or digit groups."""
    return form != "#" and form != "9" and bool(re.search(r"[^9]", form))


@dataclass(frozen=True)
class Value:
    text: str
    form: str
    noun: str | None  # the word it counts, stemmed
    head: str | None  # the content word before it, stemmed
    share: bool  # "of its RAM": a share of the noun
    last: bool  # the last word of its clause ("bumped to 50%")
    near: frozenset[str]  # the content words just before it ("my lisinopril to 20mg")


def values(text: str) -> list[Value]:
    """The text's figures, identifiers and counted number words."""
    raw = [r for r in _RAW.findall(text) if _clean(r)]
    toks = [_clean(r) for r in raw]
    out: list[Value] = []
    for i, tok in enumerate(toks):
        form = _form(tok)
        if form is None:
            continue
        noun: str | None = None
        share = False
        j = i + 1
        while j < len(toks) and (toks[j].lower() in _BETWEEN or toks[j].lower() in _POSSESSIVE):
            share = share or toks[j].lower() in _POSSESSIVE
            # An amount "of the" thing is a part of it ("$40k of the budget"); a version
            # "of the app" is not.
            if toks[j].lower() == "the" and toks[j - 1].lower() == "of" and _amount(form):
                share = True
            j += 1
        if j < len(toks) and toks[j].lower() not in _FUNCTION and _form(toks[j]) is None:
            noun = _stem(toks[j])
            # A unit of something counts that thing: "3 minutes of downtime" is no
            # "60 minutes" of a token's life.
            unit = _UNIT.fullmatch(toks[j].lower())
            if unit and j + 2 < len(toks) and toks[j + 1].lower() == "of":
                noun = f"{noun} of {_stem(toks[j + 2])}"
        prev = toks[i - 1].lower() if i > 0 else ""
        head = _stem(prev) if prev and prev not in _FUNCTION and _form(prev) is None else None
        last = i == len(toks) - 1 or raw[i].rstrip(_TRIM + ".") != raw[i]
        near = frozenset(
            _stem(w) for w in toks[max(0, i - _NEAR) : i] if w.lower() not in _FUNCTION
        )
        out.append(Value(tok, form, noun, head, share, last, near))
    return out


def same_slot(a: Value, b: Value) -> bool:
    """Whether `b` can stand where `a` stood (module docstring)."""
    if a.form != b.form or a.text.lower() == b.text.lower() or a.share or b.share:
        return False
    if a.noun is not None:
        # A measure that names its noun once ("10% of users" / "rollout bumped to 50%").
        # A measure that names its noun once, before it or not at all ("10% of users" /
        # "rollout bumped to 50%"; "10mg of X daily" / "my X to 20mg a day").
        return a.noun == b.noun or a.noun in b.near or (b.last and _amount(a.form))
    if a.form == "#":
        return False  # a number word counts something, or says nothing of a slot
    if a.head is not None and a.head == b.head:
        return True
    return _distinctive(a.form)


def replaced(old: str, new: str) -> tuple[str, ...]:
    """The earlier text's values the newer one restates with another value in the same
    slot; a value the newer text still names is kept, not replaced."""
    olds, news = values(old), values(new)
    new_texts = {v.text.lower() for v in news}
    old_texts = {v.text.lower() for v in olds}
    out: list[str] = []
    for a in olds:
        if a.text.lower() in new_texts:
            continue
        if any(same_slot(a, b) for b in news if b.text.lower() not in old_texts):
            out.append(a.text)
    return tuple(out)


def shares(text: str) -> bool:
    """Whether the text gives a figure as a share of its noun ("40GB of its RAM")."""
    return any(v.share for v in values(text))
