"""Salience of an automatic capture: its prediction error (mnemos SurprisalGate, issue 36).

Pure rules, no I/O. A hook capture is *predicted* by what the session just said (its
recent captures), by what the store already holds (the nearest memories of the same
owner), by the generic moves of a coding session (`PRIOR`: acknowledgements, steering,
questions to the agent, a missing file or an empty search) and, when a model is
configured, by the model's guess of the next message. Two errors are measured against
that prediction:

- *semantic*: one minus the best cosine between the capture and any predicted text;
- *lexical*: the capture's content words (`content_words`) that none of the predicted
  texts holds, saturating at `NEW_WORDS_FULL`: a path, a figure, a name or a term the
  session has not seen yet is what a later recall could need.

Salience is their weighted mean, in [0, 1]. A capture below the threshold is skipped (kept
for a while in the capture buffer, which consolidation distils); one above is stored with
an initial strength scaled by its salience (`strength_with`). Why these weights and
threshold: docs/decisions/0051-predictive-capture-gate.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

THRESHOLD = 0.45  # *tuned* on bench/data/capture_gate/tune.jsonl only
SEMANTIC_WEIGHT = 0.5
NEW_WORDS_FULL = 3  # this many unseen content words count as fully new

# The generic prediction of a coding session's next capture, before anything is known of
# it: what users say to agents that steers without telling anything, and the failures
# of exploring a tree (written for the gate, not taken from its evaluation data).
PRIOR: tuple[str, ...] = (
    "ok sounds good",
    "thanks, that works",
    "yes, go ahead and do it",
    "please continue",
    "can you try that again",
    "can you look at this file",
    "can you explain what this does",
    "why did that happen?",
    "what should we do next?",
    "let me think about it",
    "hmm, that's odd",
    "show me the changes",
    "fix the failing test",
    "I'm not sure about that",
    "let's do the same for the others",
    "I'll be right back",
    "Tool Bash failed: `ls dir` -> ls: cannot access 'dir': No such file or directory",
    "Tool Read failed: `/path/to/file` -> File does not exist.",
    "Tool Glob failed: `**/*.ext` -> No files found",
    "Tool Bash failed: `grep -rn pattern .` -> exit code 1",
    "Tool Bash failed: `make test` -> interrupted",
    "Tool Bash failed: `curl localhost` -> Failed to connect to localhost: Connection refused",
)

# Words that carry no content of their own in a capture: function words, the vocabulary
# of talking to an agent, and the frame of a failed tool call ("Tool Bash failed ->").
_FUNCTION = """
a an the and or but if of to in on at for from by with as is are was were be been being it
its it's this that these those there here i i'm i'll i've me my we we're we'll our you you're
your he she they them their not no yes so very too than then into about over after before up
down out off again still all any some each more most other such only own same can could will
would should shall may might must do does did done doing have has had having am just also
what which who whom whose when where why how let let's lets please ok okay alright sure yeah
yep yup nope hmm hm huh oh ah well right good great nice cool fine thanks thank cheers
awesome perfect exactly correct wrong really maybe something anything everything nothing
one ones thing things bit lot lots
"""
_AGENT_TALK = """
look see show tell explain check try run retry redo fix change make add remove use keep go
going continue proceed next start stop wait undo back now later today again first last
think sure idea approach way work works worked working seems seem looks look like want need
help file files code function test tests diff rest other others same one part step that's
what's don't can't isn't doesn't didn't won't i'd you'd we'd minutes minute moment
"""
_TOOL_FRAME = """
tool tools bash read write edit glob grep failed failure error exit code cannot access such
directory exist exists found interrupted connect connection refused localhost port ms after
"""
STOP_WORDS = frozenset((_FUNCTION + _AGENT_TALK + _TOOL_FRAME).split())
_TOKEN = re.compile(r"[^\W_][\w.:/'-]*[^\W_]|[^\W_]", re.UNICODE)


def content_words(text: str) -> set[str]:
    """The capture's content words: lower-cased tokens (identifiers, paths and figures
    whole) that are not in `STOP_WORDS`, stripped of trailing punctuation."""
    out: set[str] = set()
    for tok in _TOKEN.findall(text.lower()):
        tok = tok.strip(".:/'-")
        if tok and tok not in STOP_WORDS:
            out.add(tok)
    return out


def lexical_novelty(text: str, predicted: Iterable[str]) -> float:
    """The share of a full `NEW_WORDS_FULL` of the capture's content words that no
    predicted text holds, in [0, 1]. A capture with no content word is fully predicted."""
    words = content_words(text)
    if not words:
        return 0.0
    seen: set[str] = set()
    for other in predicted:
        seen |= content_words(other)
    # A compound seen in parts ("db-staging" after "db" and "staging") is not new either.
    new = [w for w in words if w not in seen and not _parts_seen(w, seen)]
    return min(1.0, len(new) / NEW_WORDS_FULL)


def _parts_seen(word: str, seen: set[str]) -> bool:
    parts = [p for p in re.split(r"[.:/'_-]+", word) if p and p not in STOP_WORDS]
    return len(parts) > 1 and all(p in seen for p in parts)


def semantic_error(similarities: Iterable[float]) -> float:
    """One minus the best cosine to a predicted text, in [0, 1] (1: nothing predicted)."""
    best = max(similarities, default=0.0)
    return min(1.0, max(0.0, 1.0 - best))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


@dataclass(frozen=True)
class Salience:
    """A capture's prediction errors and their blend."""

    semantic: float
    lexical: float
    value: float

    def keeps(self, threshold: float = THRESHOLD) -> bool:
        return self.value >= threshold


def salience(
    semantic: float, lexical: float, *, semantic_weight: float = SEMANTIC_WEIGHT
) -> Salience:
    """The blend of the two errors (module docstring), rounded for storage."""
    value = semantic_weight * semantic + (1.0 - semantic_weight) * lexical
    return Salience(round(semantic, 4), round(lexical, 4), round(min(1.0, max(0.0, value)), 4))


def measure(
    text: str,
    similarities: Iterable[float],
    predicted: Iterable[str],
    *,
    semantic_weight: float = SEMANTIC_WEIGHT,
) -> Salience:
    """Salience of `text` against the predicted texts (session context, nearest memories,
    the prior, a model's guess), given its cosine to each of them."""
    sem = semantic_error(similarities)
    lex = lexical_novelty(text, predicted)
    return salience(sem, lex, semantic_weight=semantic_weight)


def strength_with(base: float, value: float, threshold: float = THRESHOLD) -> float:
    """Initial strength of a kept capture of salience `value`: its tier's `base` at the
    threshold, up to half again at salience 1 (never above 0.95: only pins are 1)."""
    span = max(1e-9, 1.0 - threshold)
    lift = min(1.0, max(0.0, (value - threshold) / span))
    return round(min(0.95, base * (1.0 + 0.5 * lift)), 4)
