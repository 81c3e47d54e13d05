"""Retrieval feedback (issue 36, item 3): what a signal on a recalled memory changes, as
pure functions.

A recall's feedback becomes a *cue term*: per memory, a bounded amount added to its score
in later recalls whose query lies near the recorded cue (the recall's query vector), for
the same user. Feedback on a memory without a recall becomes a smaller *memory term* that
applies to every recall. Each recall keeps the signal last given per memory: feedback sets
signals rather than adding to them, so a second identical feedback changes nothing, and the
terms of one recall are bounded by the strongest signal's amount.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

# A signal on one delivered memory (`missed`: one the recall should have delivered).
CueSignal = Literal["helpful", "not_helpful", "missed"]
# A signal on one memory (`wrong`: its content is wrong; it is reconsolidated).
MemorySignal = Literal["helpful", "not_helpful", "wrong"]


@dataclass(frozen=True)
class FeedbackRule:
    """The amounts of each signal and their bounds (start values, see
    docs/decisions/0054-retrieval-feedback.md)."""

    helpful: float = 0.1
    not_helpful: float = -0.15
    # A missed memory is brought to the candidates and lifted as much as a helpful one
    # and a little more: it ranked too low (or was not found) for this cue.
    missed: float = 0.15
    # The most all cue terms of one memory add or remove together.
    max_bias: float = 0.3
    # Query-to-cue cosine where a cue term starts to apply, and where it applies fully.
    near: float = 0.75
    full: float = 0.9
    # Feedback on a memory without a recall: small, since it holds for every query.
    memory_helpful: float = 0.03
    memory_not_helpful: float = -0.05
    memory_wrong: float = -0.1
    max_memory_bias: float = 0.1


def cue_delta(signal: str, rule: FeedbackRule) -> float:
    """The cue term of one signal (0 for an unknown one); `wrong` on a recall's memory
    weakens it for that cue as `not_helpful` does (its rewrite is asked for besides)."""
    return {
        "helpful": rule.helpful,
        "not_helpful": rule.not_helpful,
        "wrong": rule.not_helpful,
        "missed": rule.missed,
    }.get(signal, 0.0)


def memory_delta(signal: str, rule: FeedbackRule) -> float:
    """The memory term of one signal on a memory given without a recall."""
    return {
        "helpful": rule.memory_helpful,
        "not_helpful": rule.memory_not_helpful,
        "wrong": rule.memory_wrong,
    }.get(signal, 0.0)


def cue_weight(cosine: float, rule: FeedbackRule) -> float:
    """How much of a cue's terms a query at this cosine from it gets: 0 below `near`,
    rising linearly to 1 at `full`."""
    if cosine <= rule.near:
        return 0.0
    if rule.full <= rule.near:
        return 1.0
    return min((cosine - rule.near) / (rule.full - rule.near), 1.0)


def clip(value: float, bound: float) -> float:
    return max(-bound, min(bound, value))


def bias(cue_terms: Iterable[tuple[float, float]], memory_term: float, rule: FeedbackRule) -> float:
    """A memory's feedback term in one recall: the cue terms (weight, delta) weighted and
    summed, bounded by `max_bias`, plus its memory term bounded by `max_memory_bias`; the
    whole bounded by `max_bias`."""
    cues = clip(sum(w * d for w, d in cue_terms), rule.max_bias)
    return clip(cues + clip(memory_term, rule.max_memory_bias), rule.max_bias)


def signals_of(
    helpful: Sequence[str], not_helpful: Sequence[str], missed: Sequence[str]
) -> dict[str, CueSignal]:
    """The body's ids with their signal."""
    out: dict[str, CueSignal] = {}
    for ids, signal in ((helpful, "helpful"), (not_helpful, "not_helpful"), (missed, "missed")):
        for mid in ids:
            out[mid] = signal  # type: ignore[assignment]
    return out


def problems(
    delivered: Iterable[str],
    helpful: Sequence[str],
    not_helpful: Sequence[str],
    missed: Sequence[str],
) -> list[str]:
    """What is wrong with a recall's feedback body, in words (empty: nothing): an id twice,
    helpful or not_helpful on one the recall did not deliver, missed on one it did."""
    shown = set(delivered)
    out: list[str] = []
    seen: set[str] = set()
    for mid in [*helpful, *not_helpful, *missed]:
        if mid in seen:
            out.append(f"{mid} is given more than once")
        seen.add(mid)
    out += [
        f"{m} was not delivered by this recall" for m in [*helpful, *not_helpful] if m not in shown
    ]
    out += [f"{m} was delivered by this recall: not missed" for m in missed if m in shown]
    return out


def changed(applied: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str]:
    """The signals of `wanted` that differ from those already `applied` (idempotence: the
    same signal again is no change)."""
    return {m: s for m, s in wanted.items() if applied.get(m) != s}


def cue_terms(signals: Mapping[str, str], rule: FeedbackRule) -> dict[str, float]:
    """A recall's cue terms from the signals given on it (each memory's last)."""
    return {m: d for m, s in signals.items() if (d := cue_delta(s, rule)) != 0.0}
