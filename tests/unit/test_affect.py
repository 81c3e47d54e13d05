"""Affect tags and state-dependent recall (pcm_common.domain.affect, the VADER classifier,
and Ranker.score with a charged query)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bench.common import LOCOMO_PATH
from pcm_common.domain import affect
from pcm_common.domain.memory import Affect, MemoryRecord, Strength
from pcm_common.models.affect import classify
from pcm_common.stores.vectors import ScoredPoint
from pcm_recall.ranking import Relevance
from pcm_recall.schemas import RecallIn
from tests.unit.test_recall_episode_context import ranker

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CRISIS = "Production outage in March: the API crashed with OOMKilled pods; we rolled back fast."
STACK = "Our API stack: nginx ingress in front of three app pods and one Postgres primary."
DESIGN = (
    "We weighed the long-term architecture options for the API: a monolith versus services, "
    "because the trade-offs in deployment and data consistency matter."
)
PANIC = "The API is DOWN!! production is broken, help"
PONDER = (
    "Which architecture trade-offs should we consider for the API in the long term, "
    "given the constraints on scaling and data consistency?"
)

unit = st.floats(0.0, 1.0)
tags = st.builds(Affect, valence=st.floats(-1.0, 1.0), arousal=unit, complexity=unit)


def test_tags_read_crisis_calm_and_deliberation() -> None:
    panic, crisis, stack, design = map(classify, (PANIC, CRISIS, STACK, DESIGN))
    assert panic.arousal > 0.6 and panic.valence < 0
    assert crisis.arousal >= 0.4 > stack.arousal
    assert stack.arousal < 0.2 and stack.complexity < 0.3
    assert design.complexity > 0.5 and design.arousal < 0.3
    assert classify("I am so sad, my dog died").valence < -0.5
    assert classify("We loved the concert, it was wonderful").valence > 0.5
    assert classify("") == Affect()


@given(tags, tags)
def test_state_match_is_a_symmetric_similarity(q: Affect, m: Affect) -> None:
    s = affect.state_match(q, m)
    assert 0.0 <= s <= 1.0 + 1e-9
    assert abs(s - affect.state_match(m, q)) < 1e-9
    assert abs(affect.state_match(q, q) - 1.0) < 1e-9


@given(tags, tags, st.floats(0.0, 1.0))
def test_a_neutral_query_gets_no_bonus(q: Affect, m: Affect, min_charge: float) -> None:
    b = affect.bonus(q, m, 0.2, min_charge)
    assert 0.0 <= b <= 0.2 + 1e-9
    if max(q.arousal, q.complexity) <= min_charge:
        assert b == 0.0


PLAIN_QUESTIONS = [
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint recently?",
    "How did John feel after the accident?",
    "What events has Caroline participated in to help children?",
    "When did Joanna's laptop crash?",
    "What alternative career might Nate consider after gaming?",
    # Coding talk: urgency words alone are not an incident.
    "Can you help me write down the failing tests?",
    "Fix the failing test in the CLI, it times out",
    "Why does the README say the SDK needs a JWT?",
]


def test_no_plain_question_is_charged() -> None:
    """The gate is why state-dependent recall costs LoCoMo nothing: questions about
    people's lives (and everyday coding requests) do not reach the default charge, so each
    is ranked as without affect.
    On the dev set (when this checkout has it next to it): every one of its questions."""
    questions = list(PLAIN_QUESTIONS)
    for data in (LOCOMO_PATH, Path("/work/shared/data/locomo_dev.json")):
        if data.exists():
            convs = json.loads(data.read_text())["conversations"]
            questions += [q["question"] for c in convs for q in c["qa"]]
            break
    assert all(affect.charge(classify(q), 0.5) == 0.0 for q in questions)


def test_blend_is_the_mean() -> None:
    got = affect.blend([Affect(valence=-1.0, arousal=1.0), Affect(valence=0.5, complexity=0.5)])
    assert got == Affect(valence=-0.25, arousal=0.5, complexity=0.25)
    assert affect.blend([]) == Affect()


def _hit(mid: str, text: str) -> ScoredPoint:
    rec = MemoryRecord(
        id=mid,
        tenant="t",
        text=text,
        text_hash=mid,
        created_at=NOW,
        ingested_at=NOW,
        strength=Strength(s_ref=0.6, t_ref=NOW),
        affect=classify(text),
    )
    return ScoredPoint(id=mid, score=0.6, payload=rec.to_payload())


def test_the_state_of_the_query_orders_equally_relevant_memories() -> None:
    """Three memories the search found equally relevant: an incident query puts the
    incident first, a design question the design discussion; a plain one keeps the
    store's order (the bonus is 0 for all)."""
    hits = [_hit("stack", STACK), _hit("crisis", CRISIS), _hit("design", DESIGN)]
    rel = Relevance([0.8, 0.8, 0.8], [0.6, 0.6, 0.6], reranked=False)
    svc = ranker()

    def order(query: str, **settings: float) -> list[str]:
        s = ranker(**settings) if settings else svc
        ranked = s.score(hits, rel, NOW, RecallIn(query=query), {}, classify(query))
        return [c.hit.id for c in ranked]

    assert order(PANIC)[0] == "crisis"
    assert order(PONDER)[0] == "design"
    assert order("What is in our API stack?") == ["stack", "crisis", "design"]
    # Off: the store's order whatever the query.
    assert order(PANIC, affect_weight=0.0) == ["stack", "crisis", "design"]
