"""Surprisal and absence (whitepaper §2.7, §3.7, §3.8; DESIGN §3): pure functions, no I/O.

- Families: the earlier memories that share a memory's statistical shape.
- Value outliers: a stated quantity far from the family's robust centre (median / MAD).
- Category changes: the usual template with one slot (a name, place, product) swapped, or a
  place/person added, where the family is consistent on that slot.
- Content changes: a clause that no family member has (a symptom during a run).
- Absence: a regular routine whose entries stopped for more than a few usual intervals.

The category and content rules work on pre-parsed tokens (`Tok`), so this module needs no
NLP pipeline: the local judge parses with spaCy and hands the tokens in.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

# ---- families -------------------------------------------------------------------------

# Calibrated on the dev routines with the local MiniLM (all-MiniLM-L6-v2, cosine):
# same-routine pairs have a 0.5th percentile of 0.46, pairs from different routines a
# 99.9th percentile of 0.46. At 0.45 every planted outlier still has >= 4 earlier family
# members (content outliers drift lowest) and 1.7% of family members come from another
# routine; at 0.50 four outliers lose their family, at 0.40 impurity rises to 7.6%.
FAMILY_MIN_COS = 0.45
FAMILY_MAX = 12
FAMILY_MIN = 4
FLAG_MIN_SCORE = 0.7


@dataclass(frozen=True)
class Candidate:
    id: str
    cos: float
    created_ts: float


def select_family(
    candidates: Iterable[Candidate],
    created_ts: float,
    *,
    min_cos: float = FAMILY_MIN_COS,
    max_size: int = FAMILY_MAX,
) -> list[str]:
    """Up to `max_size` nearest strictly earlier candidates with cos >= `min_cos`, nearest
    first. The caller judges only when at least FAMILY_MIN are returned."""
    eligible = [c for c in candidates if c.created_ts < created_ts and c.cos >= min_cos]
    eligible.sort(key=lambda c: (-c.cos, -c.created_ts))
    return [c.id for c in eligible[:max_size]]


# Memories created less than this far apart count as simultaneous: neither is the other's
# family. Times read back from the store can be one unit in the last place off.
SIMULTANEOUS_S = 1e-3

# Extra hits asked of a family search that leaves the later memories of the same hour to
# the caller: room for the memory itself and for the rest of its episode.
FAMILY_SLACK = 8


def family_complete(
    cos: Sequence[float],
    earlier: int,
    *,
    limit: int,
    min_cos: float = FAMILY_MIN_COS,
    max_size: int = FAMILY_MAX,
) -> bool:
    """Whether a nearest-first search that could return later memories too (those of the
    same hour, `time_keys`) proves that its `earlier` eligible hits (strictly earlier,
    cos >= `min_cos`) hold the family: there are `max_size` of them, or the search
    returned fewer than `limit` hits (nothing else matched), or its last hit is below
    `min_cos` (nothing nearer was left out). `cos`: the hits' scores, nearest first."""
    return earlier >= max_size or len(cos) < limit or cos[-1] < min_cos


# ---- quantities -----------------------------------------------------------------------

# Multipliers to one base unit per kind: seconds, metres, kilograms.
_UNITS: dict[str, tuple[str, float]] = {}
for _names, _kind, _mult in (
    ("s sec secs second seconds", "duration", 1.0),
    ("min mins minute minutes", "duration", 60.0),
    ("h hr hrs hour hours", "duration", 3600.0),
    ("day days", "duration", 86400.0),
    ("week weeks", "duration", 604800.0),
    ("km kms kilometre kilometres kilometer kilometers k", "distance", 1000.0),
    ("mi mile miles", "distance", 1609.344),
    ("m metre metres meter meters", "distance", 1.0),
    ("kg kgs kilo kilos kilogram kilograms", "weight", 1.0),
    ("lb lbs pound pounds", "weight", 0.45359237),
    ("g gram grams", "weight", 0.001),
    ("l litre litres liter liters", "volume", 1.0),
    ("ml", "volume", 0.001),
    ("kcal cal calories", "energy", 1.0),
    ("bpm", "rate", 1.0),
    ("steps", "count:step", 1.0),
):
    for _n in _names.split():
        _UNITS[_n] = (_kind, _mult)

UNIT_WORDS = frozenset(_UNITS) | {"%", "percent", "am", "pm", "o'clock"}

_QUANTITY = re.compile(
    r"(?P<cur>[$€£¥]\s?)?"
    r"(?<![\w.:/-])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?::\d{2}){0,2})(?![\d/-]|[.:]\d)"
    r"(?:\s?(?P<unit>%|[a-zA-Z]+(?:'[a-z]+)?))?"
)
_FUNCTION_WORDS = frozenset(
    "and the for with from into onto over under about after before this that then than "
    "was were are had has have per each times".split()
)
_TIME_PREFIX = re.compile(r"\b(?:at|by|from|until|till|around|before|after)\s+$", re.I)
_DATE_LIKE = re.compile(r"\d+[/-]\d+")


class Quantity(NamedTuple):
    """A stated figure."""

    kind: str  # money | duration | distance | weight | time_of_day | percent | count:<noun>
    value: float  # in the kind's base unit (seconds, metres, kg, minutes after midnight)
    text: str


def _colon_value(num: str) -> list[int]:
    return [int(p) for p in num.split(":")]


def parse_quantities(text: str) -> list[Quantity]:
    """The comparable quantities a text states, in order. Dates, years and ordinals are
    skipped: they say when, not how much."""
    out: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        num, cur, unit = m.group("num"), m.group("cur"), (m.group("unit") or "")
        unit_l = unit.lower()
        start = m.start("num")
        if _DATE_LIKE.fullmatch(text[max(0, start - 3) : m.end("num") + 3].strip(" ,.()")):
            continue
        if unit_l in {"st", "nd", "rd", "th"}:
            continue
        # Shown as stated, with the unit only when it is one ("$15.00", "45 min").
        raw = (cur or "").strip() + num + (f" {unit}" if unit_l in UNIT_WORDS else "")
        if ":" in num:
            parts = _colon_value(num)
            before = text[max(0, start - 12) : start]
            if unit_l in {"am", "pm"} or _TIME_PREFIX.search(before):
                ampm = unit_l in {"am", "pm"}
                h = parts[0] % 12 + (12 if unit_l == "pm" else 0) if ampm else parts[0]
                out.append(Quantity("time_of_day", h * 60.0 + parts[1], raw))
            elif len(parts) == 3:
                out.append(Quantity("duration", parts[0] * 3600.0 + parts[1] * 60 + parts[2], raw))
            else:  # "finished in 45:15": minutes and seconds
                out.append(Quantity("duration", parts[0] * 60.0 + parts[1], raw))
            continue
        value = float(num.replace(",", ""))
        if cur:
            mult = 1000.0 if unit_l == "k" else 1.0
            out.append(Quantity("money", value * mult, raw))
            continue
        if unit_l in {"am", "pm"}:
            hour = value % 12 + (12 if unit_l == "pm" else 0)
            out.append(Quantity("time_of_day", hour * 60.0, raw))
            continue
        if unit_l in {"%", "percent"}:
            out.append(Quantity("percent", value, raw))
            continue
        if unit_l in _UNITS:
            kind, mult = _UNITS[unit_l]
            out.append(Quantity(kind, value * mult, raw))
            continue
        if 1900 <= value <= 2100 and "." not in num and "," not in num:
            continue  # a year
        # "12 coffees" counts coffees; "3 for" or "5 and" count nothing in particular.
        countable = unit_l.isalpha() and len(unit_l) > 2 and unit_l not in _FUNCTION_WORDS
        noun = unit_l.rstrip("s") if countable else ""
        out.append(Quantity(f"count:{noun}" if noun else "number", value, raw))
    return out


def keyed(quantities: Sequence[Quantity]) -> dict[tuple[str, int], Quantity]:
    """(kind, n-th of that kind) -> quantity: the key that makes two texts' figures
    comparable ("8.0 km in 45:15" and "7.7 km, time 44:18")."""
    seen: dict[str, int] = {}
    out: dict[tuple[str, int], Quantity] = {}
    for q in quantities:
        i = seen.get(q.kind, 0)
        seen[q.kind] = i + 1
        out[(q.kind, i)] = q
    return out


@dataclass(frozen=True)
class ValueDeviation:
    kind: str
    text: str  # as stated in the memory
    value: float
    median: float
    low: float
    high: float
    z: float
    rel: float
    score: float


# A deviation is surprising at Z_FLAG robust z-scores (log scale for positive amounts, so
# "half the usual" and "twice the usual" weigh alike), raised for small families: with
# n values the spread itself is uncertain (a Student-t-like widening). The scale never
# drops below REL_FLOOR (about 1%), so an always-identical amount may change a little.
Z_FLAG = 5.0
REL_FLOOR = 0.01
MIN_VALUES = 4


def z_threshold(n: int) -> float:
    return Z_FLAG * (1.0 + 3.0 / max(n - 1, 1))


def value_deviations(
    memory: Sequence[Quantity], family: Sequence[Sequence[Quantity]]
) -> list[ValueDeviation]:
    """Each keyed quantity of the memory against the same key in the family (robust z).

    `family` should hold only comparable members (see `comparable`): a grocery bill is
    not compared with a pharmacy copay just because both are dollar amounts."""
    fam_keyed = [keyed(f) for f in family]
    out: list[ValueDeviation] = []
    for key, q in keyed(memory).items():
        values = [fk[key].value for fk in fam_keyed if key in fk]
        if len(values) < MIN_VALUES:
            continue
        circular = q.kind == "time_of_day"
        use_log = not circular and q.value > 0 and min(values) > 0
        f = math.log if use_log else float
        xs = [f(v) for v in values]
        x = f(q.value)
        med = statistics.median(xs)
        mad = statistics.median(abs(v - med) for v in xs)
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
        floor = REL_FLOOR if use_log else (15.0 if circular else REL_FLOOR * abs(med))
        # MAD alone underestimates the spread of a small or two-valued family (calls of
        # 34-36 and 44-48 min); the IQR catches that, the floor covers constant amounts.
        scale = max(1.4826 * mad, (q3 - q1) / 1.349, floor, 1e-9)
        diff = abs(x - med)
        if circular:
            diff = min(diff, 1440.0 - diff)  # 23:50 is close to 00:10
        z = diff / scale
        if min(values) <= q.value <= max(values) and not circular:
            # Seen before: a value inside the family's own range is not an outlier.
            z = min(z, Z_FLAG * 0.5)
        lin_med = statistics.median(values)
        rel = abs(q.value - lin_med) / abs(lin_med) if lin_med else math.inf
        out.append(
            ValueDeviation(
                kind=q.kind,
                text=q.text,
                value=q.value,
                median=lin_med,
                low=min(values),
                high=max(values),
                z=z,
                rel=rel,
                score=z_score(z, len(values)),
            )
        )
    return out


def z_score(z: float, n: int) -> float:
    """Map a robust z to σ: FLAG_MIN_SCORE exactly at the threshold for n values,
    saturating at 1 at twice that."""
    thr = z_threshold(n)
    if z >= thr:
        return min(1.0, FLAG_MIN_SCORE + 0.3 * (z - thr) / thr)
    return round(0.6 * z / thr, 4)


def describe_value(v: float, kind: str) -> str:
    if kind == "duration":
        if v >= 3600:
            return f"{v / 3600:.1f} h"
        if v >= 60:
            return f"{v / 60:.0f} min"
        return f"{v:.0f} s"
    if kind == "time_of_day":
        return f"{int(v // 60) % 24:02d}:{int(v % 60):02d}"
    if kind == "distance":
        return f"{v / 1000:.1f} km" if v >= 1000 else f"{v:.0f} m"
    if kind == "weight":
        return f"{v:.1f} kg"
    if kind == "money":
        return f"{v:,.2f}"
    if kind == "percent":
        return f"{v:g}%"
    return f"{v:g}"


# ---- tokens: category and content changes --------------------------------------------


class Tok(NamedTuple):
    """What the change rules need from a parsed token (spaCy or any other parser). A
    named tuple: cheaper to build and to read than a frozen dataclass."""

    text: str
    lemma: str  # lowercase
    pos: str  # universal POS
    sent: int  # sentence (or clause) number within the text
    is_stop: bool = False
    is_num: bool = False  # a figure or part of one
    is_time: bool = False  # part of a date/time expression ("this morning", "weekly")


# A token's fields as a plain tuple. The garbage collector stops tracking a plain tuple of
# strings, ints and bools after its first collection, but never a `Tok` (a subclass): the
# judge's ~15 cached tokens per memory text made most of what each ingested memory added
# to the heap that every full collection walks.
TokRow = tuple[str, str, str, int, bool, bool, bool]


def tok_rows(toks: Iterable[Tok]) -> tuple[TokRow, ...]:
    return tuple((t.text, t.lemma, t.pos, t.sent, t.is_stop, t.is_num, t.is_time) for t in toks)


def from_rows(rows: Iterable[TokRow]) -> list[Tok]:
    return [Tok._make(r) for r in rows]


CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ"})
SLOT_POS = frozenset({"NOUN", "PROPN"})


def is_minor(t: Tok) -> bool:
    """Tokens whose change never makes a category or content change: punctuation, numbers,
    units, stop words and time expressions (templates vary these freely)."""
    return (
        t.pos in {"PUNCT", "SYM", "SPACE", "NUM", "DET", "PART"}
        or t.is_num
        or t.is_stop
        or t.is_time
        or t.lemma in UNIT_WORDS
        or not any(c.isalpha() for c in t.lemma)
    )


def is_content(t: Tok) -> bool:
    return t.pos in CONTENT_POS and not is_minor(t)


def measure_words(toks: Sequence[Tok]) -> frozenset[str]:
    """The content words and units that `comparable` compares."""
    return frozenset(t.lemma for t in toks if is_content(t) or t.lemma in _UNITS)


def comparable(a: Sequence[Tok], b: Sequence[Tok]) -> bool:
    """Whether two texts' figures measure the same thing: they share at least half of the
    smaller text's content words and units ("Weighed in at 84 kg" / "Scale: 84 kg")."""
    return comparable_words(measure_words(a), measure_words(b))


def comparable_words(wa: frozenset[str], wb: frozenset[str]) -> bool:
    """`comparable` on the texts' `measure_words`."""
    if not wa or not wb:
        return False
    return len(wa & wb) >= 0.5 * min(len(wa), len(wb))


def signature(toks: Sequence[Tok]) -> list[str]:
    """Alignment symbols: lemmas, figures collapsed to '#', units to their kind."""
    out: list[str] = []
    for t in toks:
        if t.pos in {"PUNCT", "SPACE"} or (t.pos == "SYM" and not t.is_num):
            continue
        if t.is_num or t.pos == "NUM":
            if out and out[-1] == "#":
                continue
            out.append("#")
        elif t.lemma in _UNITS:
            out.append("<" + _UNITS[t.lemma][0] + ">")
        else:
            out.append(t.lemma)
    return out


def _visible(toks: Sequence[Tok]) -> list[Tok]:
    """The tokens `signature` keeps, in the same order (one per symbol)."""
    return [toks[i] for i in _visible_at(toks)]


def _visible_at(toks: Sequence[Tok]) -> list[int]:
    """The positions of `_visible`'s tokens."""
    out: list[int] = []
    prev_num = False
    for i, t in enumerate(toks):
        if t.pos in {"PUNCT", "SPACE"} or (t.pos == "SYM" and not t.is_num):
            continue
        num = t.is_num or t.pos == "NUM"
        if num and prev_num:
            continue
        out.append(i)
        prev_num = num
    return out


@dataclass(frozen=True, eq=False)
class TokView:
    """A text's tokens with what the change rules derive from that text alone. A routine's
    entries are in the family of each later entry, so a judge that keeps one view per text
    derives these once instead of once per judgement (`detect_changes_in`). The tokens
    are kept as `TokRow`s (untracked by the garbage collector) and rebuilt where the
    rules read them: for the judged memory and its best-aligned member only."""

    rows: tuple[TokRow, ...]
    measures: frozenset[str]  # `measure_words`
    content: frozenset[str]  # lemmas of the content words (`is_content`)
    sig: tuple[str, ...]  # `signature`
    sig_set: frozenset[str]  # the symbols of `sig`
    sig_repeats: Mapping[str, int]  # those occurring more than once -> how often
    vis_at: tuple[int, ...]  # `_visible_at`

    @property
    def toks(self) -> list[Tok]:
        return from_rows(self.rows)

    @property
    def vis(self) -> list[Tok]:
        """`_visible`."""
        rows = self.rows
        return [Tok._make(rows[i]) for i in self.vis_at]

    @classmethod
    def of(cls, toks: Sequence[Tok], rows: tuple[TokRow, ...] | None = None) -> TokView:
        """The view of `toks` (`rows`: theirs, when at hand)."""
        sig = tuple(signature(toks))
        return cls(
            rows=tok_rows(toks) if rows is None else rows,
            measures=measure_words(toks),
            content=frozenset(t.lemma for t in toks if is_content(t)),
            sig=sig,
            sig_set=frozenset(sig),
            sig_repeats={x: n for x, n in Counter(sig).items() if n > 1},
            vis_at=tuple(_visible_at(toks)),
        )


Block = tuple[int, int, int]  # (i, j, n): a[i:i + n] == b[j:j + n]


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> list[Block]:
    """`difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()`, as plain
    tuples: the longest common run (the earliest in `a`, then in `b`), recursively on both
    sides of it, adjacent runs joined, ending with (len(a), len(b), 0). The same steps
    without the matcher's objects and junk handling (none here) cost ~35% less."""
    b2j: dict[str, list[int]] = {}
    for j, x in enumerate(b):
        b2j.setdefault(x, []).append(j)
    nothing: list[int] = []
    found: list[Block] = []
    queue = [(0, len(a), 0, len(b))]
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        besti, bestj, bestsize = alo, blo, 0
        j2len: dict[int, int] = {}  # j -> length of the run ending at a[i - 1], b[j]
        for i in range(alo, ahi):
            get = j2len.get
            new: dict[int, int] = {}
            for j in b2j.get(a[i], nothing):
                if j < blo:
                    continue
                if j >= bhi:
                    break
                k = new[j] = get(j - 1, 0) + 1
                if k > bestsize:
                    besti, bestj, bestsize = i - k + 1, j - k + 1, k
            j2len = new
        if bestsize:
            found.append((besti, bestj, bestsize))
            if alo < besti and blo < bestj:
                queue.append((alo, besti, blo, bestj))
            if besti + bestsize < ahi and bestj + bestsize < bhi:
                queue.append((besti + bestsize, ahi, bestj + bestsize, bhi))
    found.sort()
    out: list[Block] = []
    i1 = j1 = k1 = 0
    for i2, j2, k2 in found:
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                out.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        out.append((i1, j1, k1))
    out.append((len(a), len(b), 0))
    return out


def opcodes(blocks: Sequence[Block]) -> list[tuple[str, int, int, int, int]]:
    """`SequenceMatcher.get_opcodes()` from its `matching_blocks`."""
    i = j = 0
    out: list[tuple[str, int, int, int, int]] = []
    for ai, bj, size in blocks:
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            out.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            out.append(("equal", ai, i, bj, j))
    return out


def _shared(a: TokView, b: TokView) -> int:
    """Symbols two signatures share, with multiplicity: no alignment matches more. Most
    symbols occur once, so a set intersection and a correction for the few repeated."""
    n = len(a.sig_set & b.sig_set)
    for x, nb in b.sig_repeats.items():
        na = a.sig_repeats.get(x, 0)
        if na:
            n += min(na, nb) - 1
    return n


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
    best_ratio: float = 0.0


# An entry in the usual template: most of the best-aligned family member's symbols are
# found again in order. New templates (rephrasings) align far worse than this.
MIN_COVER_SUBST = 0.5
MIN_COVER_ADD = 0.75
# The usual template must be the family's: at least this share of the members align with
# the memory (cover >= MIN_COVER_SUBST). In a routine most entries share one or a few
# phrasings; a family of loosely similar chat lines does not, and one short line that a
# longer message happens to contain is no template. Dev data: at 0.2 every planted
# category/content outlier is still flagged (16/16 each, 0/326 false) while the LoCoMo
# chat turns of conv-26 go from 553 surprise flags in 150 recalls (365 prompt tokens each)
# to none; 0.25 loses one category outlier, 0.1 still flags 144 chat turns.
TEMPLATE_SHARE = 0.2
# A slot value counts as the family's usual one when at least this share states it.
MIN_SLOT_SHARE = 0.5


def _phrase(toks: Sequence[Tok]) -> str:
    return " ".join(t.text for t in toks if t.pos not in {"PUNCT", "SPACE"}).strip()


def detect_changes(memory: Sequence[Tok], family: Sequence[Sequence[Tok]]) -> ChangeReport:
    """Category and content changes of `memory` against its family.

    The memory is aligned with the family member written in the most similar template
    (figures masked). A change is reported only where the rest of the text matches that
    member, and only with words no family member ever used: a rephrasing changes many
    symbols at once and rarely introduces a new noun in an otherwise identical sentence.
    """
    return detect_changes_in(TokView.of(memory), [TokView.of(f) for f in family])


def detect_changes_in(memory: TokView, family: Sequence[TokView]) -> ChangeReport:
    """`detect_changes` on the texts' views. A view given more than once (one text for
    several events) is aligned once."""
    report = ChangeReport()
    if not family:
        return report
    n = len(family)
    df: dict[str, int] = {}
    for member in family:
        for lemma in member.content:
            df[lemma] = df.get(lemma, 0) + 1
    sig_m = memory.sig
    best_cover, bi = -1.0, -1
    best_blocks: list[Block] = []
    covers: dict[tuple[str, ...], float] = {}  # member signature -> its cover
    in_template = 0
    for i, member in enumerate(family):
        sig_b = member.sig
        if not sig_b or not sig_m:
            continue
        cover = covers.get(sig_b, -1.0)
        blocks: list[Block] = []
        if cover < 0.0:
            if sig_b == sig_m:  # the same figure-masked template: aligns whole
                blocks = [(0, 0, len(sig_b)), (len(sig_m), len(sig_b), 0)]
                cover = 1.0
            else:
                bound = _shared(memory, member) / len(sig_b)
                if bound <= best_cover and (
                    bound < MIN_COVER_SUBST or in_template >= TEMPLATE_SHARE * n
                ):
                    continue  # it can neither be the best (ties keep the first) nor count
                blocks = matching_blocks(sig_m, sig_b)
                cover = sum(k for _, _, k in blocks) / len(sig_b)
            covers[sig_b] = cover
        in_template += cover >= MIN_COVER_SUBST
        # A signature seen before never beats its first occurrence (ties keep the first).
        if cover > best_cover:
            best_cover, bi, best_blocks = cover, i, blocks
        if best_cover >= 1.0 and in_template >= TEMPLATE_SHARE * n:
            break  # neither the best alignment nor the template test can change any more
    cover = best_cover
    report.best_ratio = max(cover, 0.0)
    if bi < 0 or in_template < TEMPLATE_SHARE * n:
        return report
    toks_m = memory.toks
    vis_m = [toks_m[i] for i in memory.vis_at]
    vis_b = family[bi].vis
    lemmas_m = {t.lemma for t in toks_m}
    novel_sents: dict[int, list[Tok]] = {}
    for op, i1, i2, j1, j2 in opcodes(best_blocks):
        if op == "equal":
            continue
        new_toks = vis_m[i1:i2]
        old_toks = vis_b[j1:j2]
        novel = [t for t in new_toks if is_content(t) and df.get(t.lemma, 0) == 0]
        if not novel:
            continue
        novel_slots = [t for t in novel if t.pos in SLOT_POS]
        old_slots = [
            t for t in old_toks if t.pos in SLOT_POS and not is_minor(t) and t.lemma not in lemmas_m
        ]
        # A clause of its own: a whole new sentence, or several novel content words
        # including a verb or adjective.
        new_sents = {t.sent for t in new_toks} - {t.sent for t in vis_m[:i1] + vis_m[i2:]}
        clause = bool(new_sents) or (
            len(novel) >= 3 and any(t.pos in {"VERB", "ADJ"} for t in novel)
        )
        if old_slots and novel_slots and not clause and cover >= MIN_COVER_SUBST:
            share = max(df.get(t.lemma, 0) for t in old_slots) / n
            if share >= MIN_SLOT_SHARE:
                report.changes.append(
                    Change(
                        kind="category",
                        score=min(1.0, 0.7 + 0.3 * (share - MIN_SLOT_SHARE) / MIN_SLOT_SHARE),
                        new=_phrase([t for t in new_toks if not is_minor(t) or t.pos == "PROPN"]),
                        usual=_phrase([t for t in old_toks if not is_minor(t)]),
                        share=share,
                    )
                )
            continue
        if cover < MIN_COVER_ADD:
            continue
        if old_slots and not clause:
            continue  # a swap against an inconsistent family: not surprising
        if clause:
            for t in novel:
                novel_sents.setdefault(t.sent, []).append(t)
        elif novel_slots:
            report.changes.append(
                Change(
                    kind="category",
                    score=0.75,
                    new=_phrase([t for t in new_toks if not is_minor(t) or t.pos == "PROPN"]),
                    usual="",
                    share=1.0,
                )
            )
    for sent, toks in novel_sents.items():
        sent_toks = [t for t in toks_m if t.sent == sent]
        content = [t for t in sent_toks if is_content(t)]
        share = len(toks) / max(len(content), 1)
        report.changes.append(
            Change(
                kind="content",
                score=min(1.0, 0.7 + 0.3 * share),
                new=_phrase(sent_toks),
                usual="",
                share=share,
            )
        )
    return report


# ---- absence --------------------------------------------------------------------------

ROUTINE_MIN_N = 5
ROUTINE_MAX_CV = 1.0
# Quiet for more than ROUTINE_GAP_FACTOR median intervals (two entries missed and the third
# half an interval overdue), and longer than any break the current run already had plus one
# interval: a routine that skipped a week before needs three quiet weeks, one that never
# skipped needs two and a half. DESIGN §3 starts at 3·g̃; with jittered entries the observed
# median interval often exceeds the nominal one, and "stopped three intervals ago" then
# measures 2.8-3.2 g̃ (dev set: stopped routines 2.8-7.0 g̃, continuing ones at most 1.5 g̃
# when asked), so 3.0 sat on the edge of the stopped cases and 2.5 sits between the two.
ROUTINE_GAP_FACTOR = 2.5
# Entries whose median interval is shorter than this are a burst (notes of one sitting),
# not a routine: six notes a few seconds apart were flagged "stopped" ten seconds later.
ROUTINE_MIN_GAP_S = 3600.0
ROUTINE_SHARED = 2  # family members a memory must share with a routine to join it
# The family members that decide a memory's routine: those nearly as close as its nearest
# one. A fringe of loosely similar entries of a neighbouring routine (weigh-ins in "kg" next
# to a gym log in "kg") must not outvote the memory's own series.
ROUTINE_NEAR_MARGIN = 0.2
RUN_BREAK = 10.0  # a gap this many median gaps long ends a run of entries


@dataclass(frozen=True)
class RoutineJoin:
    """Where a newly judged memory goes in the routine index.

    `target`: the routine it joins (None: it joins none). `merge`: other routines that it
    shows to be the same routine, to be folded into `target`. `adopt`: its family members
    that belong to no routine yet; they join with it."""

    target: str | None
    merge: tuple[str, ...] = ()
    adopt: tuple[str, ...] = ()


def routine_join(
    memory_id: str,
    family: Sequence[str],
    routine_of: Mapping[str, str],
    sizes: Mapping[str, int],
) -> RoutineJoin:
    """The routine rule of §3.8, applied once per memory when it is judged.

    A memory belongs to a routine when at least ROUTINE_SHARED of its family members do and
    they are at least half of its family: a coffee entry whose family caught two phone
    calls of similar shape stays with the coffee routine. When its family spans two
    routines that both pass, they were one routine seen from two ends and are merged (into
    the larger, so little has to move). A memory that joins no routine starts one with the
    members of its family that have none, if any: the first entries of a series.

    `routine_of`: family member -> its routine; `sizes`: routine -> entries in it.
    Judging memories in time order and applying each result builds the same partition as
    taking every memory's family as an edge of that rule, without reading any family again
    at recall time."""
    members = _members(memory_id, family)
    passing = _passing(members, routine_of)
    adopt = tuple(f for f in members if f not in routine_of)
    if not passing:
        if not adopt:
            return RoutineJoin(target=routine_of.get(memory_id))
        return RoutineJoin(target=routine_of.get(memory_id, memory_id), adopt=adopt)
    passing.sort(key=lambda r: (-sizes.get(r, 0), r))
    own = routine_of.get(memory_id)
    if own is not None and own not in passing:
        passing.append(own)  # judged again after joining elsewhere: keep its entries together
    return RoutineJoin(target=passing[0], merge=tuple(passing[1:]), adopt=adopt)


def routine_voters(family: Sequence[tuple[str, float]]) -> list[str]:
    """The family members (id, cosine) whose routines decide the memory's (`routine_join`):
    those within ROUTINE_NEAR_MARGIN of the nearest, when there are at least
    ROUTINE_SHARED of them; else the whole family (a series' first entries in a new
    phrasing have only loose neighbours, and those are its routine). Order is kept."""
    if not family:
        return []
    best = max(c for _, c in family)
    near = [m for m, c in family if c >= best - ROUTINE_NEAR_MARGIN]
    return near if len(near) >= ROUTINE_SHARED else [m for m, _ in family]


def _members(memory_id: str, family: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(f for f in family if f != memory_id))


def _passing(members: Sequence[str], routine_of: Mapping[str, str]) -> list[str]:
    """The routines that enough of the family members belong to (see `routine_join`)."""
    # A plain dict: a Counter per call cost more than the counting (twice per judgement).
    shared: dict[str, int] = {}
    for f in members:
        if f in routine_of:
            r = routine_of[f]
            shared[r] = shared.get(r, 0) + 1
    return [r for r, n in shared.items() if n >= ROUTINE_SHARED and n * 2 >= len(members)]


def routines_to_rank(
    memory_id: str, family: Sequence[str], routine_of: Mapping[str, str]
) -> list[str]:
    """The routines whose sizes `routine_join` reads for these arguments: the passing
    ones, when there are two or more to choose the target from (none otherwise), so a
    caller need not look up the size of every routine the family touches."""
    passing = _passing(_members(memory_id, family), routine_of)
    return passing if len(passing) > 1 else []


@dataclass(frozen=True)
class RoutineState:
    n: int
    last_ts: float
    median_gap_s: float
    cv: float
    regular: bool
    stopped: bool


def routine_state(
    times: Iterable[float],
    now: float,
    *,
    min_n: int = ROUTINE_MIN_N,
    max_cv: float = ROUTINE_MAX_CV,
    factor: float = ROUTINE_GAP_FACTOR,
    min_gap_s: float = ROUTINE_MIN_GAP_S,
) -> RoutineState | None:
    """Regularity of a routine's entry times and whether it has gone quiet at `now`: quiet
    for more than `factor` median intervals and for longer than its longest earlier break
    plus one median interval. Regular also needs a median interval of at least
    `min_gap_s`: entries minutes apart are one sitting, and never "stopped".

    Entries after `now` mean the routine went on, so it has not stopped. None when there
    are fewer than `min_n` entries up to now.
    """
    all_t = sorted(times)
    past = [t for t in all_t if t <= now]
    if len(past) >= 2:
        # The current run only: an isolated much older entry (a similar memory from long
        # ago, or the routine before a long break) would otherwise dominate cv.
        med0 = statistics.median(b - a for a, b in itertools.pairwise(past))
        for i in range(len(past) - 1, 0, -1):
            if med0 > 0 and past[i] - past[i - 1] > RUN_BREAK * med0:
                all_t = [t for t in all_t if t >= past[i]]
                past = past[i:]
                break
    if len(past) < min_n:
        return None
    gaps = [b - a for a, b in itertools.pairwise(past)]
    mean = statistics.fmean(gaps)
    cv = statistics.pstdev(gaps) / mean if mean > 0 else math.inf
    med = statistics.median(gaps)
    regular = cv < max_cv and med >= min_gap_s and med > 0
    quiet = now - past[-1]
    stopped = (
        regular and len(past) == len(all_t) and quiet > factor * med and quiet > max(gaps) + med
    )
    return RoutineState(
        n=len(past), last_ts=past[-1], median_gap_s=med, cv=cv, regular=regular, stopped=stopped
    )


def describe_interval(seconds: float) -> str:
    days = seconds / 86400
    if days >= 1.5:
        return f"every {days:.0f} days" if round(days) != 7 else "weekly"
    if days >= 0.75:
        return "daily"
    return f"every {seconds / 3600:.0f} h"


# ---- near duplicates -------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
_LIGHT_STOP = frozenset(
    "the a an and or but at on in to of for with from by my our your his her their its this "
    "that these those it is was were be been has have had i we you he she they me us them "
    "up out about over again also just so very".split()
)


def distinct_events(a: str, b: str, max_new_words: int = 2) -> bool:
    """Whether two near-identical texts with the same figures still describe different
    events: a different name (a capitalised word not opening a sentence) or more than
    `max_new_words` words only one of them has (an added clause). Ingest should not merge
    such a pair as a near duplicate: the merge would erase a category or content change
    ("Maya's class" -> "Ines's class"; "...; copay $15. The dose has been doubled.")."""

    def names(text: str) -> set[str]:
        out: set[str] = set()
        for sent in re.split(r"(?<=[.!?])\s+", text.strip()):
            words = _WORD.findall(sent)
            out.update(w.lower() for w in words[1:] if w[0].isupper())
        return out

    def words(text: str) -> set[str]:
        return {w.lower() for w in _WORD.findall(text)} - _LIGHT_STOP

    if names(a) != names(b):
        return True
    return len(words(a) ^ words(b)) > max_new_words
