from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pcm_common.domain.memory import Affect
from pcm_common.runtime.http import ApiError  # noqa: F401  (re-exported for the api module)
from pcm_common.text.clean import NulFree, is_blank
from pcm_recall.precise import Precision

RecallMode = Literal["focused", "associative"]


class RecallIn(NulFree):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=20_000)
    # An empty name is refused, as on writes: "" would otherwise read as no user at all
    # and widen the recall to every user's memories.
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    workspace: str | None = Field(default=None, min_length=1, max_length=200)
    project: str | None = Field(default=None, min_length=1, max_length=200)
    k: int | None = Field(default=None, ge=1, le=200)
    compact: bool = False
    now: datetime | None = None
    include_archived: bool = False
    # Superseded memories compete too (also when the query asks what held before).
    include_superseded: bool = False
    # Only memories created before this instant (strictly): a client that stores a text and
    # recalls with it at once (the prompt hook) keeps the new memory out of its own answer.
    created_before: datetime | None = None
    # How much of the ranking is delivered (pcm_recall.precise): "standard" fills the k
    # slots and expands the best seeds into their episodes; "precise" stops where
    # relevance falls off, answers empty when nothing is relevant, shows each text once
    # and flags only what the delivered memories touch. A field of its own, not a `mode`:
    # it composes with how candidates are found (focused / associative).
    precision: Precision = "standard"
    # How candidates are found: "focused" (the default) answers from the query's matches;
    # "associative" also spreads from the best of them over similarity, same-episode and
    # graph edges and returns what that reaches as `associations` (pcm_recall.associations).
    mode: RecallMode = "focused"
    # Each ranked item also carries the terms of its score (`terms`): for the inspector's
    # playground and anyone asking why a memory ranked where it did.
    explain: bool = False

    @field_validator("query")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if is_blank(v):
            raise ValueError("query is empty")
        return v


class ScoreTerms(BaseModel):
    """How an item's score was made (`explain: true`): score = relevance_term + link_term +
    scope_bonus + state_bonus + feedback (`pcm_common.domain.scoring.parts`)."""

    relevance: float
    strength: float  # decayed to `now`
    reactivated: float  # S*: the strength the cue restored
    relevance_term: float  # relevance·(0.75 + 0.25·S*)
    graph_link: float  # ℓ: how strongly the graph links it to the query (0: not linked)
    link_term: float  # the graph-link weight times ℓ
    scope_bonus: float
    state_bonus: float  # the state match of a charged query
    feedback: float  # retrieval feedback near this query
    score: float


class ContextItem(BaseModel):
    memory_id: str
    text: str
    created_at: datetime
    score: float
    relevance: float
    strength: float
    scope: str
    episode: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    state: str = "active"
    # The newer memory that superseded this one, when known (superseded memories come
    # only to recalls that ask about the past or set include_superseded).
    superseded_by: str | None = None
    # The terms of its score, when the recall asked to `explain` (items that were not
    # ranked against the query, such as pinned and episode context, have none).
    terms: ScoreTerms | None = None
    seq: int = Field(default=0, exclude=True)  # ingest order, for time-ordered rendering
    user_id: str | None = Field(default=None, exclude=True)
    workspace: str | None = Field(default=None, exclude=True)
    project: str | None = Field(default=None, exclude=True)


class AnomalyFlag(BaseModel):
    memory_id: str
    kind: str  # surprise | stopped_routine
    text: str
    differs: str = ""
    usual: str = ""
    created_at: datetime | None = None  # the flagged memory's date
    score: float | None = None  # surprisal σ (surprise flags)
    last_at: datetime | None = None  # last entry of a stopped routine
    usual_interval_days: float | None = None  # its median interval


class Association(BaseModel):
    """A memory associative recall reached from the answer's best memories: its energy
    (1.0 at the best seed, 20% less a hop) and the kind of edge that brought it there
    (`similar`, `episode` or `graph`)."""

    memory_id: str
    text: str
    energy: float
    via: str
    hops: int
    created_at: datetime | None = None


class RecallOut(BaseModel):
    anomaly_flags: list[AnomalyFlag]
    asker_context: list[ContextItem]
    situational_context: list[ContextItem]
    episode_context: list[ContextItem]
    prompt: str
    empty: bool
    timings_ms: dict[str, float]
    # The query's affect tags (state-dependent recall; None when it is off).
    query_affect: Affect | None = None
    # How charged the query is (0: neutral, up to 1; `pcm_common.domain.affect.charge`):
    # above 0, memories of the query's state gain score. None when affect is off.
    query_charge: float | None = None
    # Associative recall's additions (`mode: "associative"`); empty in focused mode.
    associations: list[Association] = Field(default_factory=list)
    # This recall's id for `POST /v1/recall/{recall_id}/feedback` (None: feedback is off).
    recall_id: str | None = None
