"""Reconsolidation (the mnemos write-up's MutableRAG): a memory a recall delivered is labile
for a while, and newer information about the same subject rewrites it as a new version
that says what holds now and what held before. Pure rules, no I/O: whether a newer text
updates an earlier one (`judge`), and the local rewrite (`rewrite`).

A newer text updates an earlier one when it is a statement about now (not a question, a
plan being weighed or a need: "should we move to Looker?", "we might try Linear", "the
shoes need replacing"; not the past: "used to") and one of these holds, in this order:

1. it says the earlier value is gone (`value_gone`): named before an ending ("Marcus
   left", "Memcached was retired", "pip is no longer used") or in a clause negated as
   over ("we don't use Trello anymore");
2. it names what it leaves behind (`left_behind`: "from React to Svelte", "instead of
   Friday", "replaced Jira with Linear", "swapped X for Y", "Phoenix, not Radiohead"),
   and that is something the earlier text says;
3. it keeps the earlier text's frame and puts a value of the same kind where the earlier
   value stood (`slot`, `pcm_common.domain.slots`): no cue needed ("The chess club meets
   on Thursdays" / "has started meeting on Tuesdays"); plain words in that place need a
   cue besides ("by bike" / "by train now");
4. it says that something changed ("moved", "switched", "rescheduled", "raised", or only
   "now", "these days") and keeps the earlier text's frame with another value in it
   (`changed`): of the earlier text's words (those of its values it drops aside), at least
   `MIN_FRAME` come back, and, where the cue is only "now" and the like, as much of the
   newer one's.

A text that names what it leaves behind, and that is not in the earlier text, is about
something else ("The build uses Webpack" / "The build moved from Node 16 to Node 20").
A text that adds ("also", "too", "as well") or keeps ("still") is no update. When the
user marked the earlier memory wrong (`wrong=True`), a newer text in its frame with another
value updates it without a cue.

Why these rules and their figures: docs/decisions/0053-reconsolidation.md and
docs/decisions/0057-reconsolidation-structure.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pcm_common.domain import slots

# Rule 2: the share of a text's frame words found in the other text (*start*, dev set).
MIN_FRAME = 0.6
# The marker the rewrite puts before the earlier text; an earlier text that already has one
# keeps only what held just before it (the whole chain is in the version history).
BEFORE = " (before: "

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9'/-]*[A-Za-z0-9]|[A-Za-z]|[$€£]?\d+(?:[.,:/]\d+)*%?[a-z]*")

# Questions and plans being weighed change nothing yet.
_TENTATIVE = re.compile(
    r"\?\s*$|\b(?:should|ought\s+to|shall\s+we|could\s+we|would\s+it|what\s+if|might|maybe|"
    r"perhaps|considering|consider|thinking\s+(?:about|of)|wondering|someday|some\s+day|"
    r"debating|proposal|proposed|propose|if\s+we|"
    # A need or a wish is no change yet: "the shoes need replacing", "we want to move".
    r"needs?\s+(?:to\b|\w+ing\b)|wants?\s+to|hop(?:e|ing)\s+to|plan(?:s|ning)?\s+to)\b",
    re.IGNORECASE,
)
_ADDS = re.compile(r"\b(?:also|too|as\s+well|additionally|in\s+addition|still)\b", re.IGNORECASE)

# A change said outright (rule 2, on the newer text's frame alone).
_STRONG = re.compile(
    r"\b(?:migrat\w*|mov(?:e|ed|es|ing)|switch\w*|replac\w*|chang\w*|relocat\w*|renam\w*|"
    r"upgrad\w*|downgrad\w*|swap\w*|trad(?:ed|ing)|took\s+over|port(?:ed|ing)|rewrit\w*|rewrote|transition\w*|pushed\s+back|"
    r"postpon\w*|reschedul\w*|raised|lowered|increased|decreased|reduced|went\s+(?:up|down)|"
    r"bumped|cancel+ed|dropped|ditched|sold|quit|left|stopped|gave\s+up|no\s+longer|"
    r"not\s+any\s*more|"
    r"any\s*more|instead|became|become|turned\s+into|from\s+now\s+on|going\s+forward)\b",
    re.IGNORECASE,
)
# A change only implied by the present tense (rule 2, on both texts' frames).
_WEAK = re.compile(r"\b(?:now|these\s+days|nowadays|currently)\b", re.IGNORECASE)

# What the newer text leaves behind (rule 1): the words after these markers up to the
# next boundary, at most `_SPAN` words. A move ("from X to Y", "replaced X with Y") ends
# its X at "to", "with", ...; an ending ("no longer goes to X", "sold the X") runs to
# the end of its clause.
_SPAN = 5
_END = r"(?:[^.;!?]|\.(?=\w))*"  # up to the sentence's end ("99.9%" is no end)
_LEAVES = re.compile(
    # "off" leaves a thing behind ("moved logging off Splunk"), not a time or a place
    # ("kicks off at 4am", "goes off every morning").
    r"\b(?:from|off(?!\s+(?:at|in|on|by|around|every|early|late)\b)|out\s+of|instead\s+of|"
    r"rather\s+than|replac(?:ed|ing|e)(?!\s+by\b)|away\s+from|swap(?:ped|ping|s)?|"
    r"trad(?:ed|ing)|exchang(?:ed|ing)|(?:took|taken|takes|taking)\s+over\s+from)\s+"
    rf"(?P<move>{_END})"
    r"|\b(?:cancel+ed|sold|closed|dropped|ditched|quit|no\s+longer|not\s+any\s*more|"
    r"stopped(?:\s+using)?|gave\s+up(?:\s+on)?|finished)\s+"
    rf"(?P<ends>{_END})"
    r"|,\s*not\s+(?P<not>(?:[^.;!?,]|\.(?=\w))*)",
    re.IGNORECASE,
)
# The earlier value said to be gone (its negation): a thing that ended, left or is no
# longer used, named just before it ("Marcus left", "Tony's closed", "the contract with
# Stripe ended", "Memcached was retired", "pip is no longer used", "the S21 stopped
# getting updates"). The words of `_GONE_SPAN` before the ending are its subject.
_GONE_SPAN = 3
_GONE = re.compile(
    r"\b(?:(?:was|were|is|are|has\s+been|have\s+been|had\s+been|got|just)\s+)?"
    r"(?:left|closed|quit|retired|resigned|shut\s+down|stepped\s+down|moved\s+on|"
    r"moved\s+away|moved\s+out|passed\s+away|ended|expired|broke|stopped|dropped|died|"
    r"replaced\s+(?:by|with)|(?:was|got)\s+stolen|"
    r"removed|deprecated|decommissioned|discontinued|sunset|gone|"
    r"no\s+longer\s+(?:used|needed|supported|available|in\s+use)|"
    r"not\s+(?:used|needed|supported)\s+any\s*more)\b",
    re.IGNORECASE,
)
_CLAUSE = r"\b(?:and|but|so|because|since|as|after|while|though)\b|,"
# Rule 2's cue counts in a clause about the earlier text's subject: in "I'm learning
# Spanish because we're moving to Madrid" the move is another matter.
_CLAUSES = re.compile(rf"[;:]|{_CLAUSE}", re.IGNORECASE)
_STOP_MOVE = re.compile(
    rf"\b(?:to|onto|into|with|for|on\s+the|last|this|next)\b|{_CLAUSE}", re.IGNORECASE
)
_STOP_ENDS = re.compile(_CLAUSE, re.IGNORECASE)
# Words that name no value or subject: function words, and the verbs that only place or
# attach a value ("lives in", "uses", "is kept in"), which a rewording changes freely.
_STOP = frozenset(
    """
    a an the and or but if of to in on at for from by with as is are was were be been being
    it its it's this that these those there here i i'm me my we we're our you your he him his
    she her they them their not no now just also so very really too than then into about
    over after before up down out off again still all any some each more most other such
    only own same can will would should could may might must do does did have has had am
    currently instead anymore longer days nowadays use uses using used lives live living
    stored kept located based held placed called named says said since hosted host
    us whom who which what mine ours yours theirs one ones old new get gets got getting
    per via within without across through during until toward towards onto upon among
    around near like unlike against along between under beyond except plus
    's 're 'm 've 'd
    """.split()
)


def _stem(word: str) -> str:
    w = word.lower().removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _is_value(token: str, first: bool) -> bool:
    """A figure, or a capitalised word past the first (which any sentence capitalises)."""
    return token[0].isdigit() or token[0] in "$€£" or (not first and token[0].isupper())


@dataclass(frozen=True)
class _Words:
    """A text's words as the rules compare them: stemmed, lower-cased, function words out."""

    all: frozenset[str]
    values: frozenset[str]


def _words(text: str) -> _Words:
    words: set[str] = set()
    values: set[str] = set()
    for i, tok in enumerate(_TOKEN.findall(core(text))):
        low = tok.lower()
        if low in _STOP or _STRONG.fullmatch(low) or _WEAK.fullmatch(low):
            continue
        w = _stem(tok)
        words.add(w)
        if _is_value(tok, i == 0):
            values.add(w)
    return _Words(frozenset(words), frozenset(values))


def core(text: str) -> str:
    """The text without the `(before: ...)` part a rewrite added."""
    at = text.find(BEFORE)
    return text[:at] if at >= 0 else text


def _left_behind(text: str) -> set[str]:
    """The words the text says it leaves behind (rule 1)."""
    out: set[str] = set()
    for m in _LEAVES.finditer(text):
        span = m.group("move") or m.group("ends") or m.group("not") or ""
        if m.group("move") is not None:
            # "from X to Y" names X only where a "to" follows: "from June" is a date.
            stop = _STOP_MOVE.search(span)
            to = stop.group(0).lower() if stop else ""
            if m.group(0).lower().startswith("from") and to not in ("to", "onto", "into"):
                continue
            span = span[: stop.start()] if stop else span
        elif m.group("ends") is not None:
            stop = _STOP_ENDS.search(span)
            span = span[: stop.start()] if stop else span
        for tok in _TOKEN.findall(span)[:_SPAN]:
            if tok.lower() not in _STOP:
                out.add(_stem(tok))
    return out


_PEOPLE = re.compile(
    r"\b(?:left|quit|retired|resigned|stepped\s+down|moved\s+on|moved\s+away|passed\s+away)",
    re.IGNORECASE,
)
# A state negated as over: "we don't use Trello any more", "Zoe isn't the lead anymore".
_NEGATED = re.compile(r"(?:\bnot\b|n't\b|\bnever\b)(?:[^.;!?]*?)\bany\s*more\b", re.IGNORECASE)
# A statement about the past says nothing of what holds now ("The office used to be in
# Denver").
_PAST = re.compile(
    r"\b(?:used\s+to|previously|formerly|originally|back\s+then|back\s+in)\b", re.IGNORECASE
)


def _gone(text: str, old: str) -> tuple[set[str], set[str]]:
    """(the earlier text's values the newer one says are gone, other names it says are
    gone). A value of the earlier text is one of its names or figures (`slots.kind`) or
    its last word, where a statement puts its value ("Dependencies are managed with
    pip"); a plain word before an ending ("the build stopped working") is no value."""
    toks = [(t, i) for i, t in enumerate(_TOKEN.findall(core(old))) if t.lower() not in _STOP]
    values = {_stem(t) for t, i in toks if slots.kind(t, first=i == 0) not in (None, "unit")}
    if toks:
        values.add(_stem(toks[-1][0]))
    hit: set[str] = set()
    other: set[str] = set()
    # Who left, quit or retired is a person or a firm: the earlier text's subject too
    # ("Omar is the CTO" / "Omar stepped down").
    names = values | {_stem(t) for t, _ in toks if t[0].isupper() and t != "I"}
    for m in _GONE.finditer(text):
        among = names if _PEOPLE.search(m.group(0)) else values
        before = text[: m.start()]
        clause = _CLAUSES.split(before)[-1]
        words = _TOKEN.findall(clause)[-_GONE_SPAN:]
        for w in words:
            if w.lower() in _STOP or w == "I":
                continue
            if _stem(w) in among:
                hit.add(_stem(w))
            elif w[0].isupper() and before.strip() != w:  # the first word: any capitalised
                other.add(_stem(w))
    for clause in _CLAUSES.split(text):
        if _NEGATED.search(clause):
            hit |= {_stem(w) for w in _TOKEN.findall(clause)} & values
    return hit, other - hit


def _cues(text: str, shared: frozenset[str]) -> tuple[bool, bool]:
    """(a strong cue, a weak cue) in a clause of `text` that names a `shared` word."""
    strong = weak = False
    for clause in _CLAUSES.split(text):
        if clause and _words(clause).all & shared:
            strong = strong or bool(_STRONG.search(clause))
            weak = weak or bool(_WEAK.search(clause))
    return strong, weak


def _about(text: str, words: frozenset[str]) -> _Words:
    """The words of the clauses of `text` that name one of `words`."""
    found = [_words(c) for c in _CLAUSES.split(text) if c and _words(c).all & words]
    return _Words(
        frozenset().union(*(w.all for w in found)), frozenset().union(*(w.values for w in found))
    )


@dataclass(frozen=True)
class Verdict:
    """Whether the newer text updates the earlier one, and why (a short reason for logs
    and the benchmark): `left_behind` / `changed` for an update, else what failed."""

    update: bool
    reason: str
    replaced: tuple[str, ...] = field(default=())


def judge(old: str, new: str, *, wrong: bool = False) -> Verdict:
    """Whether `new` updates `old` (module docstring)."""
    if _TENTATIVE.search(new):
        return Verdict(False, "tentative")
    if _PAST.search(new):
        return Verdict(False, "past")
    o, n = _words(old), _words(new)
    gone, gone_other = _gone(new, old)
    if gone:
        return Verdict(True, "value_gone", tuple(sorted(gone)))
    left = _left_behind(new) | gone_other
    if left:
        hit = left & o.all
        if hit:
            return Verdict(True, "left_behind", tuple(sorted(hit)))
        if not wrong:
            return Verdict(False, "leaves_something_else")
    if _ADDS.search(new) and not wrong:
        return Verdict(False, "adds")
    strong, weak = _cues(new, o.all & n.all)
    # The structure: the newer text keeps the earlier one's frame and puts a value of
    # the same kind where its value stood (`slots`); plain words in that place need a
    # cue besides.
    slot = slots.replacement(old, new, loose=strong or weak or wrong, changed=strong or wrong)
    if slot.frame_kept:
        return Verdict(True, "slot", tuple(w for r in slot.old for w in r.words))
    if not (strong or weak or wrong):
        return Verdict(False, "no_change_cue")
    # The newer text's clauses about the earlier one's subject: a reason given beside
    # ("because of the new job") is no part of the frame.
    about = _about(new, o.all)
    old_only, new_only = o.all - n.all, about.all - o.all
    if not old_only or not new_only:
        return Verdict(False, "nothing_replaced")
    shared = o.all & about.all
    old_frame = o.all - (old_only & o.values)
    new_frame = about.all - (new_only & about.values)
    share_old = len(shared) / len(old_frame) if old_frame else 0.0
    share_new = len(shared) / len(new_frame) if new_frame else 0.0
    if share_old < MIN_FRAME or (not strong and not wrong and share_new < MIN_FRAME):
        return Verdict(False, "other_frame")
    return Verdict(True, "changed", tuple(sorted(old_only)))


def shares_words(old: str, new: str) -> bool:
    """Whether the two texts share a content word: without one, neither the rules nor a
    model has a subject in common to judge."""
    return bool(_words(old).all & _words(new).all)


def _sentence(text: str) -> str:
    return " ".join(text.split()).rstrip(" .;")


def rewrite(old: str, new: str) -> str:
    """The local rewrite: what holds now (the newer text), then what held before (the
    earlier text, without its own `(before: ...)`): "We're migrating the frontend from
    React to Svelte (before: The frontend uses React)."."""
    return f"{_sentence(core(new))}{BEFORE}{_sentence(core(old))})."
