"""Tuning the precise cut leave-one-conversation-out (`bench.precise`).

Two things are chosen, each on three conversations and scored on the fourth:

- `min_top_cosine`: the best candidate's cosine under which the answer is empty. Chosen for
  the best balanced accuracy between the conversation's own questions (an answer wanted)
  and its questions asked as another conversation's user (the empty answer wanted). The
  best cosine is the exact one over the asker's turns (the service's embedder), which the
  service's dense search returns as its first hit.
- `score_ratio`, `max_gap` (the knee) and `min_cosine` (each memory's floor): replayed
  with the service's own function (`pcm_recall.precise.kept`) on the standard answers'
  rankings (score, evidence or not, exact cosine), the setting delivering the fewest lines
  that keeps `KEEP` of the evidence the uncut ranking held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

from bench.common import mean
from bench.locomo_data import Conversation
from pcm_recall.precise import PreciseRule, kept

Record = dict[str, Any]
KEEP = 0.95  # share of the uncut ranking's evidence the knee must keep on the training folds
COSINES = [round(0.30 + 0.01 * i, 2) for i in range(31)]
RATIOS = [round(0.30 + 0.05 * i, 2) for i in range(14)]
FLOORS = [0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45]
GAPS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1.0]


@dataclass
class Cosines:
    """Exact cosines with the service's embedder: each question against the turns of a
    conversation (the asker's memories)."""

    queries: dict[str, np.ndarray] = field(default_factory=dict)  # qid -> unit vector
    docs: dict[str, np.ndarray] = field(default_factory=dict)  # conversation -> turns
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # conversation -> dia -> row

    def top(self, qid: str, conv: str) -> float:
        """The best cosine of the question over the conversation's turns: what the
        service's dense search returns first."""
        return float((self.docs[conv] @ self.queries[qid]).max())

    def of(self, qid: str, conv: str, dias: set[str]) -> float:
        """The cosine of the question with a memory made of these turns."""
        rows = [self.rows[conv][d] for d in dias if d in self.rows[conv]]
        return float((self.docs[conv][rows] @ self.queries[qid]).max()) if rows else 0.0


async def exact_cosines(convs: Sequence[Conversation]) -> Cosines:
    from pcm_common.models.embeddings import Embedder

    emb = Embedder()
    out = Cosines()
    for conv in convs:
        d = np.asarray(await emb.embed([t.text for t in conv.turns]), dtype=np.float32)
        q = np.asarray(
            await emb.embed_queries([x.question for x in conv.questions]), dtype=np.float32
        )
        out.docs[conv.sample_id] = d / np.linalg.norm(d, axis=1, keepdims=True)
        out.rows[conv.sample_id] = {t.dia_id: i for i, t in enumerate(conv.turns)}
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        out.queries |= {x.qid: q[j] for j, x in enumerate(conv.questions)}
    return out


def _replay(records: Sequence[Record], ratio: float, gap: float, floor: float) -> dict[str, float]:
    """The knee and the per-memory cosine floor replayed on recorded rankings: evidence
    kept (share of what the uncut ranking held, over questions whose ranking held any),
    lines, precision."""
    rule = PreciseRule(
        min_top_cosine=0.0, min_cosine=floor, score_ratio=ratio, max_gap=gap, seed_ratio=1.0
    )
    keep, lines, prec = [], [], []
    for r in records:
        ranking = r["ranking"]
        chosen = kept([x[0] for x in ranking], [x[2] for x in ranking], rule)
        ev = sum(x[1] for x in ranking)
        ev_kept = sum(ranking[i][1] for i in chosen)
        if ev:
            keep.append(ev_kept / ev)
        lines.append(len(chosen))
        if chosen:
            prec.append(ev_kept / len(chosen))
    return {"evidence_kept": mean(keep), "lines": mean(lines), "precision": mean(prec)}


def _best_knee(records: Sequence[Record]) -> tuple[float, float, float]:
    feasible = []
    for ratio, gap, floor in product(RATIOS, GAPS, FLOORS):
        r = _replay(records, ratio, gap, floor)
        if r["evidence_kept"] >= KEEP:
            feasible.append((r["lines"], -ratio, gap, -floor, ratio, floor))
    if not feasible:
        return RATIOS[0], GAPS[-1], FLOORS[0]
    *_, gap, _, ratio, floor = min(feasible)
    return ratio, gap, floor


def _empty_split(own: Sequence[float], other: Sequence[float], t: float) -> tuple[float, float]:
    """(share of own questions answered, share of other-user questions left empty)."""
    return mean(float(c >= t) for c in own), mean(float(c < t) for c in other)


def _best_cosine(own: Sequence[float], other: Sequence[float]) -> float:
    return max(COSINES, key=lambda t: (sum(_empty_split(own, other, t)), -t))


def _tops(records: Sequence[Record], cos: Cosines, held: str, inside: bool) -> list[float]:
    """The best cosines of the held-out conversation's questions (`inside`) or of the
    others', over the memories of the user each was asked as."""
    return [
        cos.top(r["qid"], r["asked_as"]) for r in records if (r["conversation"] == held) == inside
    ]


def leave_one_out(own: Sequence[Record], other: Sequence[Record], cos: Cosines) -> dict[str, Any]:
    """Per held-out conversation: the parameters chosen on the other three and what they
    give on it; then the folds' mean and worst."""
    convs = sorted({r["conversation"] for r in own})
    folds: dict[str, Any] = {}
    for held in convs:
        train = [r for r in own if r["conversation"] != held]
        test = [r for r in own if r["conversation"] == held]
        ratio, gap, floor = _best_knee(train)

        t = _best_cosine(_tops(own, cos, held, False), _tops(other, cos, held, False))
        answered, empty = _empty_split(
            _tops(own, cos, held, True), _tops(other, cos, held, True), t
        )
        folds[held] = {
            "chosen": {
                "score_ratio": ratio,
                "max_gap": gap,
                "min_cosine": floor,
                "min_top_cosine": t,
            },
            **{k: round(v, 4) for k, v in _replay(test, ratio, gap, floor).items()},
            "own_answered": round(answered, 4),
            "other_user_empty": round(empty, 4),
        }
    keys = ("evidence_kept", "lines", "precision", "own_answered", "other_user_empty")
    return {
        "keep_target": KEEP,
        "folds": folds,
        "mean": {k: round(mean(f[k] for f in folds.values()), 4) for k in keys},
        "worst": {
            k: round(
                (max if k == "lines" else min)(f[k] for f in folds.values()),
                4,
            )
            for k in keys
        },
        "uncut": {k: round(v, 4) for k, v in _replay(own, 0.0, 1.0, 0.0).items()},
    }


def _near(dia: str, n: int) -> set[str]:
    """The turns within `n` of a LoCoMo turn id ("D3:7") in its session: the memories an
    automatic episode puts next to it (a session is written at one time)."""
    session, _, turn = dia.partition(":")
    if not turn.isdigit():
        return {dia}
    return {f"{session}:{int(turn) + d}" for d in range(-n, n + 1)}


SEED_RATIOS = (1.01, 0.95, 0.9, 0.85, 0.8, 0.7, 0.5)
SEED_NEIGHBOURS = (1, 2, 3)
MAX_LINES = 15  # lines a precise answer may average: ~600 prompt tokens of LoCoMo turns


def _seeded(records: Sequence[Record], rule: PreciseRule, ratio: float, n: int) -> dict[str, float]:
    """Evidence recall and lines of the precise cut plus `n` neighbours on each side of
    the seeds within `ratio` of the best, replayed on the standard rankings (neighbours by
    turn order, which is how automatic episodes order a session; no empty answers)."""
    recall, lines = [], []
    for r in records:
        ranking = r["ranking"]
        chosen = [ranking[i] for i in kept([x[0] for x in ranking], [x[2] for x in ranking], rule)]
        seeds = [x for x in chosen if x[0] >= ratio * chosen[0][0]] if chosen else []
        got = {d for x in chosen for d in x[3]}
        got |= {d for x in seeds for dia in x[3] for d in _near(dia, n)}
        ev = r["evidence"]
        recall.append(sum(e in got for e in ev) / len(ev))
        lines.append(len(got))
    return {"recall": mean(recall), "lines": mean(lines)}


def seed_sweep(own: Sequence[Record], rule: PreciseRule) -> dict[str, Any]:
    """Seeds (`seed_ratio`) and neighbours (`n`) chosen leave-one-conversation-out: the
    best evidence recall within `MAX_LINES` lines on three conversations, scored on the
    fourth; and every setting on all four."""
    grid = list(product(SEED_RATIOS, SEED_NEIGHBOURS))
    folds: dict[str, Any] = {}
    for held in sorted({r["conversation"] for r in own}):
        train = [r for r in own if r["conversation"] != held]
        scored = [(_seeded(train, rule, ratio, n), ratio, n) for ratio, n in grid]
        fit = [x for x in scored if x[0]["lines"] <= MAX_LINES] or scored
        _, ratio, n = max(fit, key=lambda x: x[0]["recall"])
        test = _seeded([r for r in own if r["conversation"] == held], rule, ratio, n)
        folds[held] = {"seed_ratio": ratio, "neighbours": n} | {
            k: round(v, 4) for k, v in test.items()
        }
    every = [
        {"seed_ratio": ratio, "neighbours": n}
        | {k: round(v, 4) for k, v in _seeded(own, rule, ratio, n).items()}
        for ratio, n in grid
    ]
    return {"max_lines": MAX_LINES, "folds": folds, "all": every}
