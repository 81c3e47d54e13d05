"""Request and answer bodies of PCM's HTTP API (DESIGN §4), as pydantic models.

They mirror the schemas the server publishes at `/openapi.json` (a test compares the two,
so drift fails it). Requests carry the fields and their types; the limits (lengths, k's
range, text size) are the server's to enforce, so a client does not refuse what a newer
server accepts, and a bad value comes back as the server's own error code.

Answers accept fields they do not declare (`extra="allow"`): a server that adds one does
not break an older client, and the field is still there under `model_extra`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["global", "workspace", "project"]
Importance = Literal["low", "normal", "high"]
Source = Literal["api", "mcp", "hook", "import", "consolidation"]
State = Literal["active", "archived", "superseded"]
CaptureMode = Literal["all", "manual_only", "hooks_only"]
Role = Literal["admin", "data"]
StoreStatus = Literal["created", "reinforced", "merged", "redacted", "skipped"]
# How much of the ranking a recall delivers: "precise" stops where relevance falls off and
# answers empty when nothing is relevant (docs/api.md, "Recall precision").
Precision = Literal["standard", "precise"]
# How a recall finds memories: "associative" also returns what spreading activation from
# the best ones reaches, as `associations` (docs/api.md, "Associative recall").
RecallMode = Literal["focused", "associative"]

# A signal on one memory (docs/api.md, "Retrieval feedback"): `wrong` also asks for its
# reconsolidation.
Signal = Literal["helpful", "not_helpful", "wrong"]
Trigger = Literal["schedule", "request", "idle"]  # what started a job run
Outcome = Literal["ok", "failed"]


class Request(BaseModel):
    """A request body: unknown fields are refused here (a typo would otherwise be a 422
    from the server), and fields left unset are not sent, so the server's defaults apply
    (a memory without a scope goes to the narrowest scope it names).

    Models are built at their first use (`defer_build`): a hook process uses two or
    three of them and starts anew for every event."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    def body(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)


# ---- requests ------------------------------------------------------------------------------


class MemoryIn(Request):
    text: str
    user_id: str | None = None
    scope: Scope | None = None
    workspace: str | None = None
    project: str | None = None
    created_at: datetime | None = None
    importance: Importance | None = None
    pinned: bool | None = None
    source: Source | None = None
    episode: str | None = None
    metadata: dict[str, Any] | None = None


class BatchIn(Request):
    memories: list[MemoryIn]


class MemoryPatch(Request):
    text: str | None = None
    importance: Importance | None = None
    pinned: bool | None = None
    state: State | None = None
    metadata: dict[str, Any] | None = None


class RecallFeedbackIn(Request):
    helpful: list[str] | None = None
    not_helpful: list[str] | None = None
    missed: list[str] | None = None


class MemoryFeedbackIn(Request):
    signal: Signal
    recall_id: str | None = None


class RecallIn(Request):
    query: str
    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None
    k: int | None = None
    compact: bool | None = None
    now: datetime | None = None
    include_archived: bool | None = None
    include_superseded: bool | None = None
    created_before: datetime | None = None
    precision: Precision | None = None
    mode: RecallMode | None = None
    explain: bool | None = None  # each ranked item carries its score's terms


class PolicyIn(Request):
    scope: Scope | None = None
    workspace: str | None = None
    project: str | None = None
    capture_mode: CaptureMode | None = None
    retention_days: int | None = None
    max_memories: int | None = None


class JobIn(Request):
    now: datetime | None = None


class KeyIn(Request):
    role: Role | None = None
    expires_in_s: int | None = None


class RotateIn(Request):
    overlap_s: int | None = None
    expires_in_s: int | None = None


# ---- answers -------------------------------------------------------------------------------


class StoreResult(Answer):
    # None only for a capture the server skipped (`status: "skipped"`, with a `reason`).
    id: str | None
    status: StoreStatus
    reason: str | None = None
    # An automatic capture's salience (the predictive capture gate), kept or skipped.
    salience: float | None = None


class BatchOut(Answer):
    results: list[StoreResult]


class MemoryPage(Answer):
    items: list[dict[str, Any]]
    next_offset: str | None
    # Every memory the filters match, when the listing was asked to count (`count=true`).
    total: int | None = None


class Affect(Answer):
    valence: float = 0.0
    arousal: float = 0.0
    complexity: float = 0.0


class ScoreTerms(Answer):
    """The terms of a ranked item's score (a recall with `explain`): score = relevance_term
    + link_term + scope_bonus + state_bonus + feedback."""

    relevance: float
    strength: float
    reactivated: float
    relevance_term: float
    graph_link: float
    link_term: float
    scope_bonus: float
    state_bonus: float
    feedback: float
    score: float


class ContextItem(Answer):
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
    superseded_by: str | None = None
    terms: ScoreTerms | None = None


class AnomalyFlag(Answer):
    memory_id: str
    kind: str
    text: str
    differs: str = ""
    usual: str = ""
    created_at: datetime | None = None
    score: float | None = None
    last_at: datetime | None = None
    usual_interval_days: float | None = None


class Association(Answer):
    """A memory associative recall reached: its energy and the kind of edge that brought
    it (`similar`, `episode`, `graph`)."""

    memory_id: str
    text: str
    energy: float
    via: str
    hops: int
    created_at: datetime | None = None


class RecallOut(Answer):
    anomaly_flags: list[AnomalyFlag]
    asker_context: list[ContextItem]
    situational_context: list[ContextItem]
    episode_context: list[ContextItem]
    prompt: str
    empty: bool
    timings_ms: dict[str, float]
    query_affect: Affect | None = None
    query_charge: float | None = None
    associations: list[Association] = []
    # For `recall_feedback` (None: the server keeps no feedback).
    recall_id: str | None = None


class FeedbackOut(Answer):
    recall_id: str | None = None
    memory_id: str | None = None
    changed: dict[str, str] = Field(default_factory=dict)
    unchanged: list[str] = Field(default_factory=list)
    reinforced: list[str] = Field(default_factory=list)
    reconsolidation: list[str] = Field(default_factory=list)


class Readiness(Answer):
    ready: bool
    checks: dict[str, Any]


class ErrorBody(Answer):
    error: str
    detail: Any = None


class Memory(Answer):
    """A stored memory (`GET /v1/memories/{id}`): the fields every memory has, and the
    rest of its record (strength, surprisal, graph, affect, ...) under `model_extra`."""

    id: str
    text: str
    scope: Scope
    state: State
    pinned: bool
    importance: Importance
    source: Source
    created_at: datetime
    version: int
    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None
    episode: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class MemoryVersion(Answer):
    version: int
    text: str
    at: datetime | None = None
    current: bool = False
    changed_at: datetime | None = None
    reason: str | None = None  # "edit" or "reconsolidation"
    by: str | None = None


class MemoryHistory(Answer):
    id: str
    versions: list[MemoryVersion]
    supersedes: str | None = None
    superseded_by: str | None = None


class JobResult(Answer):
    job: str
    changed: Any


class JobRun(Answer):
    """One run of a lifecycle job on the caller's tenant (`GET /v1/jobs/runs`)."""

    job: str
    trigger: Trigger
    started_at: datetime
    finished_at: datetime
    duration_ms: float
    outcome: Outcome
    changed: int | None = None  # absent when it failed
    error: str | None = None
    now: datetime | None = None  # the simulated time a request asked for


class JobRuns(Answer):
    job: str
    interval_s: float  # the scheduler runs it at most once per this interval per tenant
    runs: list[JobRun]  # newest first


class JobRunsOut(Answer):
    jobs: list[JobRuns]


class ImportRefusal(Answer):
    line: int  # the memory's line: in the file for `import_lines`, else in the request
    id: str
    error: str  # capture_refused | secret_detected | id_taken
    detail: Any = None


class ImportOut(Answer):
    imported: int
    existing: int
    skipped: int
    reembedded: int
    redacted: int
    refused: list[ImportRefusal]

    @classmethod
    def empty(cls) -> ImportOut:
        return cls(imported=0, existing=0, skipped=0, reembedded=0, redacted=0, refused=[])

    def add(self, part: ImportOut, first_line: int) -> None:
        """Count in the answer to one part of a file whose memories start at `first_line`
        of the file (its refusals' lines made the file's)."""
        for name in ("imported", "existing", "skipped", "reembedded", "redacted"):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        self.refused += [r.model_copy(update={"line": first_line + r.line}) for r in part.refused]


class Erased(Answer):
    memories: int
    episode_records: int
    graph_memories: int
    routine_memories: int
    stream_entries: int
    redis_keys: int
    facts: int = 0  # distilled facts with an erased source


class ErasureOut(Answer):
    job_id: str
    status: str
    resumed: bool
    erased: Erased


class ReembedIn(Request):
    model: str


class ReembedOut(Answer):
    """A re-embedding job (`GET /v1/admin/reembed`); status "none": there was none."""

    job_id: str | None
    status: str  # none | running | switching | done
    model: str | None
    from_model: str | None
    store_model: str
    done: int
    total: int
    fraction: float
    resumed: int
    started_at: float | None
    finished_at: float | None
    error: str | None


# The server's schema names of the models above whose fields it declares (the rest are
# answers it publishes as free-form objects); the OpenAPI drift test walks this.
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    m.__name__: m
    for m in (
        MemoryIn,
        BatchIn,
        MemoryPatch,
        RecallIn,
        RecallFeedbackIn,
        MemoryFeedbackIn,
        FeedbackOut,
        PolicyIn,
        JobIn,
        KeyIn,
        RotateIn,
        StoreResult,
        BatchOut,
        MemoryPage,
        Affect,
        ScoreTerms,
        ContextItem,
        AnomalyFlag,
        Association,
        RecallOut,
        Readiness,
        ErrorBody,
        JobRun,
        JobRuns,
        JobRunsOut,
        ImportRefusal,
        ImportOut,
        Erased,
        ErasureOut,
        MemoryVersion,
        MemoryHistory,
        ReembedIn,
        ReembedOut,
    )
}
