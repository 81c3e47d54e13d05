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

import functools
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

from pcm_common.domain.quantities import (
    UNIT_WORDS,
    Quantity,
    parse_quantities,
    relative_step,
)

__all__ = ["UNIT_WORDS", "Quantity", "parse_quantities"]

# ---- families -------------------------------------------------------------------------

# Family members: at least this cosine, where the local MiniLM separates one routine's
# entries from another's. Why 0.45: docs/decisions/0026-surprisal-family-threshold.md.
FAMILY_MIN_COS = 0.45
FAMILY_MAX = 12
# Three earlier events are enough to judge a figure: the Student-t threshold for two
# degrees of freedom only passes a glaring departure (about 20 spreads out). A category or
# content change needs four members (CHANGE_FAMILY_MIN): a consensus of three is noise.
FAMILY_MIN = 3
CHANGE_FAMILY_MIN = 4
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


# ---- quantities -----------------------------------------------------------------------


def keyed(quantities: Sequence[Quantity]) -> dict[tuple[str, int], Quantity]:
    """(key, n-th with that key) -> quantity: figures compare by what they measure, in
    whatever order a phrasing states them ("8.0 km in 45:15", "45:15 for 8 km")."""
    seen: dict[str, int] = {}
    out: dict[tuple[str, int], Quantity] = {}
    for q in quantities:
        i = seen.get(q.key, 0)
        seen[q.key] = i + 1
        out[(q.key, i)] = q
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


# A deviation is surprising when a new draw from the family's spread would lie this far
# out with probability below TAIL_P: the Student-t quantile with n - 1 degrees of freedom,
# so a routine's fourth or fifth entry needs a far larger departure than its twelfth (the
# spread of a few values is itself uncertain). Deviations are on a log scale for positive
# amounts ("half" and "twice the usual" weigh alike). The scale never drops below
# REL_FLOOR (about 1%) nor below half the step the figures are written in ("5 min": 1 of
# 5), so an always-identical amount may change a little.
TAIL_P = 1e-3
REL_FLOOR = 0.01
MIN_VALUES = 3
# A prior on a routine's relative spread, worth PRIOR_WEIGHT values: four entries that
# happen to agree within 1% do not prove that the fifth must (a weekly shop of 1,028-1,054
# and then 1,258), while a dozen agreeing entries outweigh it.
PRIOR_SPREAD = 0.03
PRIOR_WEIGHT = 1.0


def shrunk_scale(scale: float, n: int) -> float:
    """The log-scale spread of `n` values pooled with the prior's (a conjugate-style
    weighted mean of variances)."""
    pooled = ((n - 1) * scale**2 + PRIOR_WEIGHT * PRIOR_SPREAD**2) / (n - 1 + PRIOR_WEIGHT)
    return math.sqrt(pooled)


@functools.lru_cache(maxsize=64)
def t_quantile(p: float, df: int) -> float:
    """The upper `p` quantile of Student's t with `df` degrees of freedom (bisection on
    its tail, integrated numerically: only small df are ever asked)."""
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def tail(x: float) -> float:
        # The upper tail past x, with t = x / sqrt(1 - u^2) mapping [x, inf) onto [0, 1).
        steps = 600
        total = 0.0
        for i in range(steps):
            u = (i + 0.5) / steps
            t = x / math.sqrt(1 - u * u) if x > 0 else 0.0
            dt = x * u / (1 - u * u) ** 1.5 / steps
            total += math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df)) * dt
        return total

    lo, hi = 0.0, 1e4
    for _ in range(60):
        mid = (lo + hi) / 2
        if tail(mid) > p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def z_threshold(n: int) -> float:
    """The deviation (in scales) that flags a value against `n` family values."""
    return t_quantile(TAIL_P, max(n - 1, 1))


def value_deviations(
    memory: Sequence[Quantity], family: Sequence[Sequence[Quantity]]
) -> list[ValueDeviation]:
    """Each keyed quantity of the memory against the same key in the family (robust z).

    `family` should hold only comparable members (see `comparable`): a grocery bill is
    not compared with a pharmacy copay just because both are dollar amounts."""
    fam_keyed = [keyed(f) for f in family]
    out: list[ValueDeviation] = []
    # Several unitless numbers in one text pair with the family's only by position,
    # which phrasings do not keep ("temp 60.3 hum 60", "60% at 15.2°"): left out.
    bare = sum(q.key == "number" for q in memory)
    for key, q in keyed(memory).items():
        if q.key == "number" and bare > 1:
            continue
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
        floor = _floor(q, values, family_steps(family, key), use_log, circular, med)
        # MAD alone underestimates the spread of a small or two-valued family (calls of
        # 34-36 and 44-48 min); the IQR catches that, the floor covers constant amounts.
        scale = max(1.4826 * mad, (q3 - q1) / 1.349, floor, 1e-9)
        if use_log:
            scale = shrunk_scale(scale, len(values))
        diff = abs(x - med)
        if circular:
            # 23:50 is close to 00:10; a clock past 24:00 ("31:20") wraps like one.
            diff = diff % 1440.0
            diff = min(diff, 1440.0 - diff)
        # A prediction for one new value: the centre's own uncertainty widens it.
        z = diff / scale / math.sqrt(1 + 1 / len(values))
        if min(values) <= q.value <= max(values) and not circular:
            # Seen before: a value inside the family's own range is not an outlier.
            z = min(z, 0.5 * z_threshold(len(values)))
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


def family_steps(family: Sequence[Sequence[Quantity]], key: tuple[str, int]) -> list[float]:
    """The relative step each member's figure for `key` is written in, where readable."""
    out: list[float] = []
    for f in family:
        k = keyed(f).get(key)
        step = relative_step(k.text) if k is not None else None
        if step is not None:
            out.append(step)
    return out


def _floor(
    q: Quantity,
    values: Sequence[float],
    steps: Sequence[float],
    use_log: bool,
    circular: bool,
    med: float,
) -> float:
    if circular:
        return 15.0
    step = statistics.median(steps) / 2 if steps else 0.0
    if use_log:
        return max(REL_FLOOR, step)
    return max(REL_FLOOR, step) * abs(med)


def z_score(z: float, n: int) -> float:
    """Map a robust z to σ: FLAG_MIN_SCORE exactly at the threshold for n values,
    saturating at 1 at twice that."""
    thr = z_threshold(n)
    if z >= thr:
        return min(1.0, FLAG_MIN_SCORE + 0.3 * (z - thr) / thr)
    return round(0.6 * max(z, 0.0) / thr, 4)


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
    is_name: bool = False  # part of a name (a named entity, or a proper noun mid-sentence)
    role: str = ""  # for a noun: what its phrase fills ("at", "with", "obj", "subj")
    head: str = ""  # for a noun: the lemma of its phrase's head


# A token's fields as a plain tuple: the garbage collector stops tracking a plain tuple of
# strings, ints and bools, never a `Tok` (docs/decisions/0029-judge-tokens-as-tuples.md).
TokRow = tuple[str, str, str, int, bool, bool, bool, bool, str, str]


def tok_rows(toks: Iterable[Tok]) -> tuple[TokRow, ...]:
    # `tuple(t)` holds a Tok's fields in order; mypy types it as a variadic tuple only.
    return cast(tuple[TokRow, ...], tuple(tuple(t) for t in toks))


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
        or t.lemma.rstrip(".") in UNIT_WORDS  # "39 L.": an abbreviation's dot
        or not any(c.isalpha() for c in t.lemma)
        or any(c.isdigit() for c in t.lemma)  # "1h20", "5k": a figure with its unit
    )


def is_content(t: Tok) -> bool:
    return t.pos in CONTENT_POS and not is_minor(t)


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
