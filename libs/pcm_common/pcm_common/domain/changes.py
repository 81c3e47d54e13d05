"""Category and content changes of a memory against its family, independent of sentence
shape (whitepaper §3.7): pure functions on parsed tokens (`surprisal.Tok`).

A routine is written in one or several phrasings, so nothing here aligns word order. Each
text is reduced to a `Profile`: its content words, its slots (the nouns and names that fill
a role: the object of "at", "with", "to", a direct object, a name) and its clauses. The
family's consensus is what most members say (a Laplace-smoothed share, so four members
agreeing is weaker evidence than eleven):

- category: a consensus slot is missing and a slot no member ever used fills the same role
  ("at Riverside Drugs" where the family says "at QuickCare Pharmacy"), or a new name or
  place is added to an entry that otherwise says what a member says;
- content: a clause made mostly of words no member ever used, next to the routine's own
  statement ("... It lists a second meter at an address I don't recognise.").

Word order is read in one case only: an entry that repeats a member token for token but for
one short phrase (a templated log line) swaps that phrase, whatever roles the parse gave it.
What the rules read of a text is `change_profile`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pcm_common.domain.change_profile import FIGURE, NAME_ROLE, Clause, Profile, words

# A consensus word: its smoothed share (df + 1) / (n + 2) reaches this. Four of four
# members give 0.83, three of four 0.67 (not enough), nine of twelve 0.71.
CONSENSUS = 0.7
# An added clause: at least this many words no member used, and at least this share of
# the clause's content words.
CLAUSE_MIN_NOVEL = 2
CLAUSE_NOVEL_SHARE = 0.5
# A routine whose entries carry a passing remark this often (a smoothed share: one of four
# entries, two of seven) has a habit of remarks: a new one is news only when longer than
# any of them (`_beyond_habit`).
HABIT_SHARE = 0.3
# A member is worded like the memory when it holds this share of the memory's words
# (apart from what the memory adds).
PHRASING_COVER = 0.8
# An addition (a name or place in an otherwise usual entry) needs the entry to contain
# this share of some member's content words.
ADDITION_COVER = 0.8
# More than this share of a memory's words (and figure kinds) must be in one phrasing of
# its routine when the memory holds nothing the routine agrees on: a majority.
ANCHOR_COVER = 0.5
# Fewer members of the memory's own routine than this: no consensus to speak of.
MIN_MEMBERS = 3
# Figure kinds a phrasing must state (all of them alike) to be taken for the same routine
# without a word in common: one kind ("£") is shared by every bill, two rarely are.
SIGNATURE_KINDS = 2
# Roles whose new filler is a new place, person or provider when added to an entry.
# The subject of a routine's log line is mostly the event itself ("morning run", "weekly
# shop"), which a new wording renames; the slots a category change swaps (place, person,
# product) are names, objects or prepositional phrases.
EVENT_ROLE = "subj"
_PLACE_ROLES = frozenset({"at", "in", "with", "from", "to", "by", NAME_ROLE})
# Prepositional roles of a phrase that qualifies the event (how, where, with whom).
_ADJUNCT_ROLES = frozenset({"at", "in", "with", "from", "to", "by", "via", "on", "through"})


@dataclass
class Change:
    kind: str  # category | content
    score: float
    new: str  # what the memory says instead / in addition
    usual: str  # the family's usual value ("" for a pure addition)
    share: float  # how consistent the family is on the usual value


@dataclass
class ChangeReport:
    changes: list[Change] = field(default_factory=list)


def smoothed_share(df: int, n: int) -> float:
    """Laplace's rule of succession: the share of members saying it, shrunk towards 1/2."""
    return (df + 1) / (n + 2)


def _df(family: Sequence[Profile]) -> dict[str, int]:
    df: dict[str, int] = {}
    for member in family:
        for lemma in member.content:
            df[lemma] = df.get(lemma, 0) + 1
    return df


def _role_of(lemma: str, family: Sequence[Profile]) -> str:
    roles: dict[str, int] = {}
    for member in family:
        if lemma in member.slots:
            r = member.slots[lemma]
            roles[r] = roles.get(r, 0) + 1
    return max(roles, key=lambda r: roles[r]) if roles else ""


def routine_members(memory: Profile, family: Sequence[Profile]) -> list[Profile]:
    """The members of the memory's own routine: those sharing a word with it or, in turn,
    with such a member (one phrasing shares "bill" with the memory, another shares the
    provider's name with that one). A family may hold entries of a neighbouring routine
    (a pharmacy copay near a grocery bill) that share nothing; their consensus is not the
    memory's. When few members share a word, also those that state the same kinds of
    figures as the memory (or some of them) and name nothing it does not ("Scale: 84 kg"
    beside "Weighed in at 84 kg")."""
    reached = words(memory)
    own: list[Profile] = []
    left = list(family)
    grew = True
    while grew:
        grew = False
        for m in list(left):
            if words(m) & reached:
                own.append(m)
                left.remove(m)
                reached = reached | words(m)
                grew = True
    figures = memory.content - words(memory)
    if len(own) < MIN_MEMBERS:  # a phrasing with no word in common, naming nothing else
        own += [m for m in left if m.content - words(m) and m.content - words(m) <= figures
                and (m.names <= memory.names or _same_measures(m, figures))]  # fmt: skip
    return own


def _same_measures(member: Profile, figures: frozenset[str]) -> bool:
    """Whether a member states exactly the memory's figure kinds, and at least two of
    them ("43.2 L, CHF 62.81" beside "Esso, 57.70 CHF, 39 L"): a measure that specific is
    the same routine even where the names differ (a swapped provider is what a category
    change is)."""
    return len(figures) >= SIGNATURE_KINDS and member.content - words(member) == figures


def detect_changes(memory: Profile, family: Sequence[Profile]) -> ChangeReport:
    report = ChangeReport()
    own = routine_members(memory, family)
    n = len(own)
    if n < MIN_MEMBERS:
        return report
    df = _df(family)  # a word any member used is not new
    df_own = _df(own)
    consensus = {w for w, k in df_own.items() if smoothed_share(k, n) >= CONSENSUS}
    if not consensus:
        return report  # no routine to depart from
    clauses = _added_clauses(memory, df, consensus)
    added = _beyond_habit(memory, clauses, own, consensus)
    if not _anchored(memory, own, consensus):
        # Nothing the routine agrees on, not even the kind of figure it states, and no
        # phrasing of it: another series whose family only brushed this one (a deploy log
        # among invoices through "billing"), not a swapped place or provider.
        report.changes += [c for c, _ in added]
        return report
    novel = {w: r for w, r in memory.slots.items() if df.get(w, 0) == 0}
    swap = _substitution(memory, own, df_own, consensus, novel, n) or _template_swap(
        memory, own, df, df_own, consensus, n
    )
    if swap is not None:
        # The clause holding the names swapped in ("Filled at Texaco Riverside") states
        # that swap, not something added.
        fillers = set(novel)
        added = [(c, lemmas) for c, lemmas in added if not lemmas & fillers]
        report.changes += [c for c, _ in added]
        report.changes.append(swap)
        return report
    report.changes += [c for c, _ in added]
    # A habitual remark's words ("in sweat") are no new place either.
    in_added: set[str] = set().union(*(lemmas for _, lemmas in clauses))
    novel = {w: r for w, r in novel.items() if w not in in_added}
    if (add := _addition(memory, own, novel, consensus)) is not None:
        report.changes.append(add)
    return report


def _anchored(memory: Profile, own: Sequence[Profile], consensus: set[str]) -> bool:
    """Whether the memory states something of its routine: a word or figure kind the
    routine agrees on, or most of one of its phrasings ("mobile 1,153 (Parrot, 13.9GB)"
    beside "mobile 1,186 (Kite Wireless, 12.3GB)")."""
    if memory.content & consensus:
        return True
    size = len(memory.content)
    return any(len(memory.content & m.content) > ANCHOR_COVER * size for m in own)


def _added_clauses(
    memory: Profile, df: Mapping[str, int], consensus: set[str]
) -> list[tuple[Change, frozenset[str]]]:
    """Clauses of mostly new words beside a clause that states the routine, each with
    its new words."""
    if len(memory.clauses) < 2:
        return []
    out: list[tuple[Change, frozenset[str]]] = []
    agreed = {w[len(FIGURE) :].split(":", 1)[0] for w in consensus if w.startswith(FIGURE)}
    for i, clause in enumerate(memory.clauses):
        if clause.figure and (clause.lemmas & consensus or clause.kinds & agreed):
            continue  # the routine's own statement (or its figure), however phrased
        if not _is_added(i, clause, df):
            continue
        rest = [c for j, c in enumerate(memory.clauses) if j != i]
        if not any(c.lemmas & consensus or c.kinds & agreed for c in rest):
            continue  # no statement of the routine (a word, or a figure it agrees on) beside it
        if (clause.lemmas & consensus) - set().union(*(c.lemmas for c in rest)):
            continue  # it carries part of that statement: "Grocery run at X" + "total $71"
        new = frozenset(w for w in clause.lemmas if df.get(w, 0) == 0)
        share = len(new) / max(len(clause.lemmas), 1)
        change = Change(
            kind="content",
            score=min(1.0, 0.7 + 0.3 * share),
            new=clause.text,
            usual="",
            share=share,
        )
        out.append((change, new))
    return out


def _beyond_habit(
    memory: Profile,
    added: list[tuple[Change, frozenset[str]]],
    own: Sequence[Profile],
    consensus: set[str],
) -> list[tuple[Change, frozenset[str]]]:
    """What the memory adds, when it says more than the routine's habitual remark. Some
    routines carry a passing remark in many entries ("queue was long", "partner came
    along", "woke to birdsong"): a clause with no word or figure of the routine's own
    statement. Where the routine makes them (a smoothed share of its entries), the
    memory's addition is news only when it holds more new words than any such remark."""
    if not added:
        return added
    said = frozenset().union(*(lemmas for _, lemmas in added))
    df = _df(own)
    rare = {w for w, k in df.items() if k < HABIT_SHARE * len(own)}
    remarks = [len(words) for member in own if (words := _remark(member, consensus, rare))]
    phrased, alike = _phrasing_remarks(memory, own, said, consensus)
    limits = [
        _longest_remark(sizes)
        for sizes, n in ((remarks, len(own)), (phrased, alike))
        if sizes and smoothed_share(len(sizes), n) >= HABIT_SHARE
    ]
    return added if not limits or len(said) > max(limits) else []


def _longest_remark(sizes: Sequence[int]) -> float:
    """How long the routine's remarks run, from the few seen: the longest of k seen,
    raised by a k-th of itself, as the largest of a sample falls short of the largest of
    its kind by about that much (one remark of two words seen: up to four)."""
    top = max(sizes)
    return top + top / len(sizes)


def _phrasing_remarks(
    memory: Profile, own: Sequence[Profile], said: frozenset[str], consensus: set[str]
) -> tuple[list[int], int]:
    """The remarks of the memory's own phrasing, read from words rather than whole clauses
    (a parse may join "muddy knees" to the clause naming the nursery): among the members
    worded like the memory apart from what it adds, the sizes of what each says after its
    first clause beyond that wording, in words few entries of the routine use ("Arlo
    collected 3:19 - Little Acorns nursery, muddy knees" beside "..., chatting nonstop").
    Returns those sizes (members saying nothing more are left out) and the number of
    members worded alike."""
    frame = words(memory) - said
    if not frame:
        return [], 0
    df = _df(own)
    common = {w for w, k in df.items() if k >= HABIT_SHARE * len(own)} | consensus
    wording = frame - consensus  # the words of the memory's phrasing, not the routine's
    sizes: list[int] = []
    alike = 0
    for member in own:
        if len(wording & words(member)) < PHRASING_COVER * len(wording):
            continue
        alike += 1
        later = frozenset().union(*(c.lemmas for c in member.clauses[1:]))
        if extra := {w for w in later - frame - said - common if not w.startswith(FIGURE)}:
            sizes.append(len(extra))
    return sizes, alike


def _remark(member: Profile, consensus: set[str], rare: set[str]) -> frozenset[str]:
    """The words of a member's clauses that state nothing of the routine: no figure, no
    word it agrees on, and only words few of its entries use (a phrasing's own words,
    "did the weekly shop", recur in its every entry)."""
    return frozenset().union(
        *(
            c.lemmas
            for c in member.clauses
            if c.lemmas and not c.figure and not c.lemmas & consensus and c.lemmas <= rare
        )
    )


def _is_added(i: int, clause: Clause, df: Mapping[str, int]) -> bool:
    """Mostly words no member used; or, after the first clause, a clause that says
    something, with no figure, made only of such words ("He asked me twice what day it
    was", "I've been really thirsty all week")."""
    new = [w for w in clause.lemmas if df.get(w, 0) == 0]
    if len(new) >= CLAUSE_MIN_NOVEL and len(new) >= CLAUSE_NOVEL_SHARE * len(clause.lemmas):
        return True
    only_new = bool(new) and len(new) == len(clause.lemmas)
    return i > 0 and clause.predicate and not clause.figure and only_new


def _compatible(role_new: str, role_old: str) -> bool:
    return role_new == role_old or NAME_ROLE in (role_new, role_old)


def _substitution(
    memory: Profile,
    own: Sequence[Profile],
    df: Mapping[str, int],
    consensus: set[str],
    novel: Mapping[str, str],
    n: int,
) -> Change | None:
    """A consensus slot the memory lacks, replaced by a slot no member used: in the same
    role, or in an entry that says exactly what a member says but for the two. A common
    noun counts only as the head of its phrase ("hotel gym" for "river path", not
    "bathroom scale" for "scale")."""
    missing = [w for w in consensus if w not in memory.content and _role_of(w, own)]
    # An entry a member says word for word but for the two makes any new word a filler,
    # whatever the parse made of it ("CloudVault billing" for "Cinemaxx+ billing").
    same_rest = _same_but_for(memory, own, set(missing), set(novel))
    fillers = {w: r for w, r in novel.items() if same_rest or _fills(w, memory, df)}
    if not missing or not fillers:
        return None
    same_rest = same_rest or _same_but_for(memory, own, set(missing), set(fillers))
    best: tuple[float, str, str] | None = None
    for old in missing:
        role_old = _role_of(old, own)
        for new, role_new in fillers.items():
            if not (same_rest or _compatible(role_new, role_old)):
                continue
            if role_old == role_new == EVENT_ROLE:
                continue  # the entry's own event reworded: "grocery run" for "weekly shop"
            share = smoothed_share(df[old], n)
            if best is None or share > best[0]:
                best = (share, new, old)
    if best is None:
        return None
    share, new, old = best
    return Change(
        kind="category",
        score=min(1.0, 0.7 + (share - CONSENSUS)),
        new=_slot_phrase(new, memory, set(fillers)),
        usual=_phrase_of(old, own, set(missing)),
        share=df[old] / n,
    )


def _template_swap(
    memory: Profile,
    own: Sequence[Profile],
    df: Mapping[str, int],
    df_own: Mapping[str, int],
    consensus: set[str],
    n: int,
) -> Change | None:
    """An entry that repeats a member token for token but for one short phrase, where the
    member's phrase holds a word the routine agrees on and the entry's only words no
    member used ("Out early: the canal towpath, 6 km" after "Out early: the lakeside
    loop, 6 km"): a templated log line with its place or provider swapped, whatever roles
    the parse gave the two phrases."""
    best: tuple[float, str, str] | None = None
    for member in own:
        spans = _differing_spans(memory.sequence, member.sequence)
        if spans is None:
            continue
        (a, b), (c, d) = spans
        new_words = {w for w in memory.sequence[a:b] if w in memory.content}
        old_words = {w for w in member.sequence[c:d] if w in consensus}
        # The routine's place, person or provider is a noun or a name (the new one may be a
        # word the parser does not know); a remark swapped for another ("slept straight
        # through", "woke early") is no category change.
        if not old_words & member.nominal or any(df.get(w, 0) for w in new_words):
            continue
        share = max(smoothed_share(df_own[w], n) for w in old_words)
        if best is None or share > best[0]:
            best = (share, " ".join(memory.shown[a:b]), " ".join(member.shown[c:d]))
    if best is None:
        return None
    share, new, old = best
    return Change(kind="category", score=min(1.0, 0.7 + (share - CONSENSUS)), new=new,
                  usual=old, share=share)  # fmt: skip


# A templated entry's swapped phrase is at most this many tokens, and the template around
# it at least `TEMPLATE_MIN` tokens.
SWAP_MAX = 4
TEMPLATE_MIN = 3


def _differing_spans(
    a: Sequence[str], b: Sequence[str]
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The one stretch in which two token sequences differ, as (start, end) in each,
    when both are short, neither holds a figure and the rest is a template; else None."""
    pre = 0
    while pre < min(len(a), len(b)) and a[pre] == b[pre]:
        pre += 1
    post = 0
    while post < min(len(a), len(b)) - pre and a[-1 - post] == b[-1 - post]:
        post += 1
    sa, sb = (pre, len(a) - post), (pre, len(b) - post)
    if pre + post < TEMPLATE_MIN:
        return None
    if not (0 < sa[1] - sa[0] <= SWAP_MAX and 0 < sb[1] - sb[0] <= SWAP_MAX):
        return None
    if FIGURE in a[sa[0] : sa[1]] or FIGURE in b[sb[0] : sb[1]]:
        return None
    return sa, sb


def _fills(lemma: str, memory: Profile, df: Mapping[str, int]) -> bool:
    """A name, or the head of a phrase (or a word qualifying a new head)."""
    head = memory.heads.get(lemma, lemma)
    return lemma in memory.names or head == lemma or df.get(head, 0) == 0


def _same_but_for(
    memory: Profile, own: Sequence[Profile], missing: set[str], novel: set[str]
) -> bool:
    """Whether some member says exactly the memory's other words ("Sensor log (loft)"
    against "Sensor log (wine cellar)")."""
    rest = words(memory) - novel
    return bool(rest) and any(words(m) - missing == rest for m in own)


def _addition(
    memory: Profile, family: Sequence[Profile], novel: Mapping[str, str], consensus: set[str]
) -> Change | None:
    """A new name, or a new place or companion phrase, in an entry that otherwise contains
    what some member says, in a role the family never varies (a family that meets a
    different friend each time makes a new friend no news)."""
    cover = max(
        (len(m.content & memory.content) / len(m.content) for m in family if m.content),
        default=0.0,
    )
    if cover < ADDITION_COVER:
        return None
    varying = {r for m in family for w, r in m.slots.items() if w not in consensus}
    if varying & _ADJUNCT_ROLES:
        # Entries that vary one adjunct ("by bank transfer", "via the app") make another
        # ("in cash") no news, whatever its preposition.
        varying |= _ADJUNCT_ROLES
    for new, role in novel.items():
        if role in varying:
            continue
        head = memory.heads.get(new, new)
        if role not in _PLACE_ROLES or (new not in memory.names and head not in novel):
            continue
        return Change(
            kind="category",
            score=0.75,
            new=_slot_phrase(new, memory, set(novel)),
            usual="",
            share=1.0,
        )
    return None


def _phrase_of(lemma: str, family: Sequence[Profile], among: set[str]) -> str:
    for member in family:
        if lemma in member.slots:
            return _slot_phrase(lemma, member, among)
    return lemma


def _slot_phrase(lemma: str, p: Profile, among: set[str]) -> str:
    """The slot's words: those of `among` sharing its head, in the text's order."""
    head = p.heads.get(lemma, lemma)
    same = [p.words.get(w, w) for w, h in p.heads.items() if w in among and h == head]
    return " ".join(same) or p.words.get(lemma, lemma)
