"""Which slot of a statement a newer statement fills with another value: the structural
half of reconsolidation's judgement (`domain.reconsolidation`), with no parser and no I/O.

A short statement about a subject reads as a frame (subject and relation: "the chess club
meets on", "Noah's bedtime is") and a value in it ("Thursdays", "8pm"). Two statements
share the frame's content words; what one has that the other lacks are their values. A
newer statement *replaces* the earlier one's value when

- the earlier text's words that the newer lacks form runs (`Run`) that hold values only
  (a figure, a time, a weekday, a month, a part of the day, a name, a number word, a
  unit) - the relation itself is kept, so "Sprint planning happens every second Monday" /
  "Sprint planning usually takes about two hours" (the verb went) replaces nothing;
- a run of the newer text's own words stands in the same place: after the same shared
  word, or before it, within one clause ("The project deadline is tight | because two
  engineers are on leave": the figure is in another clause);
- and holds a value of the same kind (a weekday for a weekday, a time for a time, a name
  for a name), since a value of another kind is another fact about the subject ("The
  flight to Lisbon departs at 6:20" / "... has a 45-minute layover": a duration, and the
  relation went too).

Two things make it another fact, not a replacement: a word of its own inside the
earlier subject ("The admin API", "Sara's return flight": another API, another flight),
and a time the earlier value lacked ("opens at 8am on Sundays" narrows "opens at 6am" to
an exception) unless the change is said outright.

`replacement(old, new)` gives the runs that were replaced; `loose=True` also accepts runs
of plain words (a cue elsewhere must then say that something changed: "My commute is by
bike" / "I commute by train now").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'/-]*[A-Za-z0-9]|[A-Za-z]|[$€£]?\d+(?:[.,:/]\d+)*%?[a-z]*")
_CLAUSE = re.compile(
    r";|[:,](?!\d)|\s(?:and|but|so|because|since|as|after|while|though|when|until|now\s+that)\s",
    re.IGNORECASE,
)

# Words that place a value but are none: function words, auxiliaries, the verbs of being
# and keeping ("is kept in", "lives in"). They neither anchor a slot nor fill one.
_FUNCTION = frozenset(
    """
    a an the and or but if of to in on at for from by with as is are was were be been being
    it its this that these those there here i me my we our you your he him his she her they
    them their not no now just also so very really too than then into about over after
    before up down out off again still all any some more most other such only own same can
    will would should could may might must do does did have has had am get gets got getting
    currently instead anymore longer nowadays these use uses using used lives live living
    stored kept located based held placed called named hosted us which what who
    per via within without across through during until onto upon around near like
    every each other usually about around roughly approximately
    's 're 'm 've 'd i'm we're it's
    """.split()
)

_DETERMINER = frozenset("a an the my our your his her their its this that".split())
_PREPOSITION = frozenset("at in on to with by from for into onto under via through".split())

# The kinds that scope a statement in time.
_SCOPE = frozenset({"weekday", "month", "daypart", "time"})

_WEEKDAY = re.compile(
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?", re.IGNORECASE
)
_MONTH = re.compile(
    r"january|february|march|april|may|june|july|august|september|october|november|december",
    re.IGNORECASE,
)
_DAYPART = re.compile(r"mornings?|afternoons?|evenings?|nights?|lunchtime")
_TIME = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm)|\d{1,2}:\d{2}|noon|midnight", re.IGNORECASE)
_NUMBER_WORD = re.compile(
    r"once|twice|half|dozen|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|million|"
    r"daily|weekly|monthly|yearly|annually|hourly|fortnightly|biweekly|quarterly"
)
_UNIT = re.compile(
    r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|km|kms|miles?|kg|gb|mb|tb|"
    r"degrees?|percent|times?|requests?|users?|seats?"
)


def kind(word: str, first: bool = False) -> str | None:
    """A word's value kind, or None for a plain word (`first`: the sentence's first word,
    which any sentence capitalises)."""
    low = word.lower()
    if _TIME.fullmatch(word):
        return "time"
    if _WEEKDAY.fullmatch(low):
        return "weekday"
    if _MONTH.fullmatch(low) and (word[0].isupper() or low != "may"):
        return "month"
    if _DAYPART.fullmatch(low):
        return "daypart"
    if word[0].isdigit() or word[0] in "$€£" or _NUMBER_WORD.fullmatch(low):
        return "number"
    if _UNIT.fullmatch(low):
        return "unit"
    if not first and (word[0].isupper() or any(c.isdigit() for c in word)):
        return "name"
    return None


def stem(word: str) -> str:
    w = word.lower().removesuffix("'s").removesuffix("'")
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@dataclass(frozen=True)
class _Tok:
    stem: str
    kind: str | None
    clause: int
    # The plain content word right after it, if any ("three worker nodes": "worker").
    then: str | None
    # Whether a content word comes right before it ("admin API": "API").
    after_word: bool
    # The preposition that introduces it, articles aside ("at the Hub": "at").
    prep: str | None


@dataclass(frozen=True)
class Run:
    """Consecutive content words one text has and the other lacks, and the shared content
    words on either side of them in their clause (None at the clause's edge)."""

    words: tuple[str, ...]
    kinds: frozenset[str]
    plain: int  # words of no value kind
    left: str | None
    right: str | None
    prep: str | None


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    at = 0
    for clause, part in enumerate(_CLAUSE.split(text)):
        words = _WORD.findall(part)
        for i, w in enumerate(words):
            if w.lower() in _FUNCTION:
                continue
            nxt = words[i + 1] if i + 1 < len(words) else ""
            plain_next = (
                bool(nxt)
                and nxt.lower() not in _FUNCTION
                and kind(nxt) is None
                # a verb's form is no thing qualified ("on Mondays starting this month")
                and not nxt.lower().endswith(("ed", "ing"))
            )
            prev = words[i - 1] if i > 0 else ""
            j = i - 1
            while j >= 0 and words[j].lower() in _DETERMINER:
                j -= 1
            prep = words[j].lower() if j >= 0 and words[j].lower() in _PREPOSITION else None
            out.append(
                _Tok(
                    stem(w),
                    kind(w, first=at == 0),
                    clause,
                    then=stem(nxt) if plain_next else None,
                    after_word=bool(prev) and prev.lower() not in _FUNCTION,
                    prep=prep,
                )
            )
            at += 1
    return out


def _value_kind(t: _Tok, other: frozenset[str]) -> str | None:
    """A token's kind as a slot's value: none where it qualifies a plain word the other
    text lacks ("includes five engineers", "the monthly reliability meeting"); a count
    of the frame's own thing stays one ("has 12 nodes" / "has 20 nodes")."""
    if t.kind is None or t.kind == "unit":
        return None
    if t.then is not None and t.then not in other:
        return None
    return t.kind


def _runs(toks: list[_Tok], other: frozenset[str]) -> list[Run]:
    runs: list[Run] = []
    i = 0
    while i < len(toks):
        if toks[i].stem in other:
            i += 1
            continue
        j = i
        while j < len(toks) and toks[j].stem not in other and toks[j].clause == toks[i].clause:
            j += 1
        part = toks[i:j]
        before = toks[i - 1] if i > 0 and toks[i - 1].clause == toks[i].clause else None
        after = toks[j] if j < len(toks) and toks[j].clause == toks[i].clause else None
        kinds = [_value_kind(t, other) for t in part]
        runs.append(
            Run(
                words=tuple(t.stem for t in part),
                kinds=frozenset(k for k in kinds if k),
                plain=sum(t.kind is None for t in part),
                left=before.stem if before else None,
                right=after.stem if after else None,
                prep=part[0].prep,
            )
        )
        i = j
    return runs


def _subject_qualified(new: list[_Tok], old_stems: frozenset[str]) -> bool:
    """Whether the newer text puts a word of its own right before its first shared word:
    "The admin API listens on port 9090" is about another API than "The API listens on
    port 8080"."""
    for i, t in enumerate(new):
        if t.stem in old_stems:
            return i > 0 and t.after_word and new[i - 1].stem not in old_stems
    return False


def _inserted(old: str, new: str) -> bool:
    """Whether the newer text puts a word of its own between two words that stand side
    by side in the earlier one: "Sara's return flight" is another flight than "Sara's
    flight", "Tom's wife's birthday" another birthday. A verb phrase put there comes
    with a function word ("the club has started meeting")."""
    ow = [stem(w) for w in _WORD.findall(old)]
    nw = [stem(w) for w in _WORD.findall(new)]
    o_set = frozenset(ow)
    pairs = {(a, b) for a, b in itertools.pairwise(ow) if a not in _FUNCTION and b not in _FUNCTION}
    for k, a in enumerate(nw):
        for gap in (1, 2):
            m = k + gap + 1
            if m < len(nw) and (a, nw[m]) in pairs:
                between = nw[k + 1 : m]
                if all(w not in _FUNCTION and w not in o_set for w in between):
                    return True
    return False


def _same_place(a: Run, b: Run) -> bool:
    return (a.left is not None and a.left == b.left) or (a.right is not None and a.right == b.right)


@dataclass(frozen=True)
class Replacement:
    """The earlier text's runs a newer text fills with other values (empty: none), and
    whether every content word of the earlier text outside them came back (its frame)."""

    old: tuple[Run, ...]
    frame_kept: bool


def replacement(old: str, new: str, *, loose: bool = False, changed: bool = False) -> Replacement:
    """How `new` fills the slots of `old` (module docstring)."""
    ot, nt = _tokens(old), _tokens(new)
    o_stems, n_stems = frozenset(t.stem for t in ot), frozenset(t.stem for t in nt)
    if not (o_stems & n_stems):
        return Replacement((), False)  # no shared word: no frame to fill
    if _subject_qualified(nt, o_stems) or _inserted(old, new):
        return Replacement((), False)
    new_runs = _runs(nt, o_stems)
    replaced: list[Run] = []
    unfilled = 0
    for run in _runs(ot, n_stems):
        valued = run.plain == 0 and bool(run.kinds)
        fills = [
            r
            for r in new_runs
            if _same_place(run, r)
            # A time the earlier value lacked narrows it ("opens at 8am on Sundays" /
            # "opens at 6am"): an exception, unless a change is said outright.
            and (changed or not (r.kinds - run.kinds) & _SCOPE)
            and (
                (valued and run.kinds <= r.kinds)
                # Plain words for plain words, where a cue says something changed: a
                # value the earlier text named still needs a value of its kind.
                or (
                    loose
                    and not run.kinds
                    and run.plain <= 2
                    and r.plain <= 3
                    and run.prep == r.prep
                )
                # ... or one the same preposition introduces: "held at the Hub" / "now
                # held at the library".
                or (loose and run.prep is not None and run.prep == r.prep)
            )
        ]
        if fills:
            replaced.append(run)
        else:
            unfilled += 1
    return Replacement(tuple(replaced), frame_kept=bool(replaced) and unfilled == 0)
