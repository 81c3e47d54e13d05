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


# ---- urgency: which queries are charged (issue 36 item 7) ---------------------------------
#
# The word cues above miss most ordinary emergencies: "the server is down" has one urgency
# word and no second signal, "customers can't log in" has none. What an urgent request is
# about is better read from its meaning: the query's embedding (already computed for the
# search) is compared with a few general descriptions of an urgent situation and of a calm
# one, and the margin between the closest of each says which it resembles. The descriptions
# name situations, not words: no query of the labelled set is among them
# (bench/data/charge_queries.jsonl; docs/decisions/0052-associative-recall.md).

URGENT_PROTOTYPES = (
    "Something in production is broken or down right now and users are affected.",
    "An urgent incident: a service, system or site is failing and needs help immediately.",
    "Customers cannot use the product at the moment: errors, outages, failed payments or logins.",
    "A security emergency: data is exposed or leaked, or an account is compromised.",
    "Data is being lost or corrupted and has to be recovered quickly.",
    "Work is blocked because something stopped working, and a deadline is close.",
    "A server, cluster or pipeline has failed and nothing works until it is fixed.",
)
CALM_PROTOTYPES = (
    "A calm question about how something should be designed, organized or built.",
    "Comparing options and their trade-offs to make a long-term decision.",
    "Asking what was decided, what someone said, or where some notes are kept.",
    "Planning future work: a roadmap, a migration, a process or a meeting.",
    "Asking how a system or a component works, or for an explanation.",
    "An everyday personal question about preferences, hobbies, food or plans.",
    "A question about technical details: a data model, a configuration, a policy, or "
    "where something runs.",
    "Thinking ahead, with no rush, about how a system could scale or change someday.",
    "Asking when or why something happened in the past, or about a person's life and history.",
)


def prototype_margin(urgent_cos: Sequence[float], calm_cos: Sequence[float]) -> float:
    """How much closer the query is to an urgent situation than to a calm one: the best
    cosine to an urgent description minus the best to a calm one (0 when either is
    missing)."""
    if not urgent_cos or not calm_cos:
        return 0.0
    return max(urgent_cos) - max(calm_cos)


# A question about when or why something happened looks back: "When did Joanna's laptop
# crash?" is about a crash, not in one. The opening wh-word and a past auxiliary say so.
_RETROSPECTIVE = re.compile(
    r"^\W*(?:when|why|how|what|where|who|which)\b[^?!.]*?\b(?:did|was|were|had)\b",
    re.IGNORECASE,
)


def retrospective(text: str) -> bool:
    """Whether the query asks about the past ("When did ...", "What area was hit ...")."""
    return _RETROSPECTIVE.search(text) is not None


def urgency(
    arousal: float, margin: float, *, offset: float, span: float, looks_back: bool = False
) -> float:
    """The query's urgency level in [0, 1], on the arousal scale so that the charge's
    threshold (0.5) applies to it: its word-and-form arousal, or the prototype margin
    placed on that scale (`offset` of margin reads 0.5, `offset + span` reads 1.0),
    whichever is higher. Either cue alone can charge a query; a question that looks back
    (`retrospective`) is charged by its words only."""
    from_meaning = 0.5 + (margin - offset) / (2.0 * span) if span > 0 and not looks_back else 0.0
    return _clip(max(arousal, from_meaning))


def urgent_state(q: Affect, level: float) -> Affect:
    """The query's state for state-dependent recall once its urgency is known: arousal
    raised to its urgency level, complexity set aside (a calm design question is not
    charged, however long: only urgency charges)."""
    return Affect(valence=q.valence, arousal=round(max(q.arousal, level), 3), complexity=0.0)
