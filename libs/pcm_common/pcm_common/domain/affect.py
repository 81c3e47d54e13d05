"""Affect tags and state-dependent retrieval (DESIGN §6; the mnemos write-up's affective
router, after Russell's circumplex of valence and arousal, with complexity added for
cognitive load; Bower 1981 for mood-congruent recall).

Every memory carries three numbers: valence in [-1, 1], arousal in [0, 1], complexity in
[0, 1]. A query gets the same. When the query is itself charged (an incident: "prod is
down!!"; or deep design work: a long question weighing options), memories whose state
matches it gain a little score, so the fix of the last outage outranks the calm
architecture note that shares its words, and the reverse for a design question.

mnemos blends 0.7 similarity with 0.3 state match on every query. Here the term is gated
and small, so that a neutral question (nearly every LoCoMo question) is ranked exactly as
without it: it costs no accuracy where affect says nothing.

Pure functions: valence comes in from the classifier (`pcm_common.models.affect`, VADER),
arousal and complexity are computed here from the text's form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pcm_common.domain.memory import Affect

# Words of urgency, breakage and alarm: an incident's vocabulary.
_URGENT = re.compile(
    r"\b(?:urgent(?:ly)?|asap|emergency|immediately|right\s+now|critical|sev[- ]?[012]|p0|"
    r"outage|down|broken|breaking|crash(?:ed|es|ing)?|fail(?:ed|s|ing|ure)?|panic(?:king)?|"
    r"incident|on\s+fire|help|blocked|deadline|hotfix|rollback|roll\s+back|data\s+loss|"
    r"corrupt(?:ed|ion)?|leak(?:ed|ing)?|hacked|breach|oom(?:killed)?|timeout|timing\s+out|"
    r"500s?|pag(?:ed|ing)|alarm|scared|terrified|furious|angry|worried|stressed)\b",
    re.IGNORECASE,
)
# Words of deliberation: trade-offs, options, architecture.
_DELIBERATE = re.compile(
    r"\b(?:trade-?offs?|architecture|architectural|design|approach(?:es)?|alternatives?|"
    r"options?|compare|comparing|versus|vs\.?|pros?|cons|consider(?:ing)?|strategy|"
    r"refactor(?:ing)?|migrat(?:e|ing|ion)|scal(?:e|ing|ability)|because|however|whereas|"
    r"although|therefore|implications?|constraints?|long[- ]term)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_SHOUT = re.compile(r"\b[A-Z]{3,}\b")
_CODE = re.compile(r"[A-Za-z0-9]+(?:[_./:][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z]+")
# Abbreviations and codes that are not shouting.
_NOT_SHOUTS = frozenset(
    """
    API URL URI SQL HTTP HTTPS JSON XML YAML TOML CSV HTML CSS PDF AWS GCP CPU GPU RAM SSD
    DNS VPN SSH TLS SSL JWT UUID SDK CLI MCP PCM LLM RAG ORM CRUD REST RPC GRPC TCP UDP
    OOM UTC GMT EST PST TODO FIXME README FAQ ETA CEO CTO CFO USA NYC LGBTQ NASA
    """.split()
)


def _clip(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return min(max(x, lo), hi)


def arousal(text: str, valence: float) -> float:
    """How urgent or alarmed: urgency words, exclamation marks, shouted words, and the
    strength of the sentiment either way. Urgency words alone stay under the default charge
    (0.5): "help me write down the failing tests" is everyday coding talk; with a second
    signal ("DOWN!!", a strongly negative sentiment) it is an incident."""
    urgent = len(_URGENT.findall(text))
    exclaims = text.count("!")
    shouts = sum(1 for w in _SHOUT.findall(text) if w not in _NOT_SHOUTS)
    return _clip(
        0.2 * min(urgent, 2) + 0.1 * min(exclaims, 3) + 0.15 * min(shouts, 2) + 0.2 * abs(valence)
    )


def complexity(text: str) -> float:
    """Cognitive load: length, long words, code-like tokens and words of deliberation."""
    words = _WORD.findall(text)
    if not words:
        return 0.0
    long_share = sum(1 for w in words if len(w) >= 9) / len(words)
    code = len(_CODE.findall(text))
    deliberate = len(_DELIBERATE.findall(text))
    return _clip(
        0.35 * min(len(words) / 40.0, 1.0)
        + 0.25 * min(long_share * 3.0, 1.0)
        + 0.15 * min(code / 2.0, 1.0)
        + 0.25 * min(deliberate / 2.0, 1.0)
    )


def tag(text: str, valence: float) -> Affect:
    """The affect of `text`, given its valence (VADER's compound score)."""
    v = _clip(valence, -1.0, 1.0)
    return Affect(
        valence=round(v, 3),
        arousal=round(arousal(text, v), 3),
        complexity=round(complexity(text), 3),
    )


def blend(parts: Sequence[Affect]) -> Affect:
    """The affect of a record made of `parts` (an episode record of its sources): the mean."""
    if not parts:
        return Affect()
    n = len(parts)
    return Affect(
        valence=round(sum(p.valence for p in parts) / n, 3),
        arousal=round(sum(p.arousal for p in parts) / n, 3),
        complexity=round(sum(p.complexity for p in parts) / n, 3),
    )


def charge(q: Affect, min_charge: float) -> float:
    """How much the query's state should count, in [0, 1]: 0 up to `min_charge` of arousal
    or complexity (a neutral question), rising to 1 at the top of the scale."""
    level = max(q.arousal, q.complexity)
    if level <= min_charge or min_charge >= 1.0:
        return 0.0
    return (level - min_charge) / (1.0 - min_charge)


def state_match(q: Affect, m: Affect) -> float:
    """1 for the same state, 0 for opposite corners: the mean distance on the three axes
    (valence spans 2, so it is halved)."""
    d = (abs(q.valence - m.valence) / 2.0 + abs(q.arousal - m.arousal)) + abs(
        q.complexity - m.complexity
    )
    return 1.0 - d / 3.0


def bonus(q: Affect, m: Affect, weight: float, min_charge: float) -> float:
    """The score a memory gains for matching a charged query's state; 0 for a neutral
    query. (A memory stored before tagging reads as neutral: 0, 0, 0.)"""
    if weight <= 0.0:
        return 0.0
    c = charge(q, min_charge)
    return weight * c * state_match(q, m) if c > 0.0 else 0.0
