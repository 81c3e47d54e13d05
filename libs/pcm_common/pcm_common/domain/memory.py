"""The memory record stored as a Qdrant point payload (DESIGN §2)."""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from pcm_common.domain.figures import FIGURES_KEY, figures_key
from pcm_common.domain.strength import decayed, reactivates, reinforce

# Payload fields that are not the record's own: what `to_payload` derives from its
# `created_at` and `figures`, and the calendar keys the Edge adapter adds for its own
# searches (`stores.qdrant.edge.time_keys`).
DERIVED_FIELDS = frozenset({"created_ts", FIGURES_KEY, "time_keys"})


class Scope(StrEnum):
    GLOBAL = "global"
    WORKSPACE = "workspace"
    PROJECT = "project"


class Importance(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


class State(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"


class Source(StrEnum):
    API = "api"
    MCP = "mcp"
    HOOK = "hook"
    IMPORT = "import"
    CONSOLIDATION = "consolidation"


class Strength(BaseModel):
    s_ref: float = 0.6
    t_ref: datetime
    n: int = 0
    recalls_in_window: int = 0
    window_start: datetime | None = None
    last_recalled_at: datetime | None = None

    def at(self, now: datetime, pinned: bool = False) -> float:
        """Current strength, decayed lazily to `now`."""
        return decayed(self.s_ref, self.t_ref, self.n, now, pinned)

    def reinforced(self, at: datetime, *, recalled: bool = False) -> Strength:
        """The strength after one reinforcement at `at` (a repeat or a recall); time never
        runs backwards for it, so a replayed older event reinforces at the latest time."""
        at = max(at, self.t_ref)
        r = reinforce(self.s_ref, self.t_ref, self.n, self.recalls_in_window, self.window_start, at)
        return self.model_copy(
            update={
                "s_ref": r.s_ref,
                "t_ref": r.t_ref,
                "n": r.n,
                "recalls_in_window": r.recalls_in_window,
                "window_start": r.window_start,
                **({"last_recalled_at": at} if recalled else {}),
            }
        )


class Surprisal(BaseModel):
    score: float | None = None
    differs: str = ""
    usual: str = ""
    family_ids: list[str] = Field(default_factory=list)
    judged_at: datetime | None = None
    # The grouping rule the family was chosen under (`visibility.GROUPING`); 0: a verdict
    # from before families kept to one owner, judged again by the sweep.
    grouping: int = 0


class GraphInfo(BaseModel):
    extracted: bool = False
    entities: list[str] = Field(default_factory=list)
    extracted_at: datetime | None = None


class Affect(BaseModel):
    """Affect tags (pcm_common.domain.affect): valence in [-1, 1], arousal and complexity
    in [0, 1]; all 0 for a memory stored without them."""

    valence: float = 0.0
    arousal: float = 0.0
    complexity: float = 0.0


class MemoryRecord(BaseModel):
    id: str
    tenant: str
    user_id: str | None = None
    scope: Scope = Scope.GLOBAL
    workspace: str | None = None
    project: str | None = None
    text: str
    text_hash: str
    figures: list[str] = Field(default_factory=list)
    created_at: datetime
    ingested_at: datetime
    # Ingest order: breaks ties between memories stored with the same `created_at` (a
    # replayed conversation session), so episode neighbours keep their true order.
    seq: int = 0
    importance: Importance = Importance.NORMAL
    pinned: bool = False
    strength: Strength
    state: State = State.ACTIVE
    episode: str | None = None
    source: Source = Source.API
    affect: Affect = Field(default_factory=Affect)
    surprisal: Surprisal = Field(default_factory=Surprisal)
    graph: GraphInfo = Field(default_factory=GraphInfo)
    version: int = 1
    supersedes: str | None = None
    superseded_by: str | None = None
    repeats: list[datetime] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # An automatic capture's prediction error when the capture gate kept it
    # (`domain.salience`); None for explicit stores.
    salience: float | None = None
    # What a derived record is: `episode` (an episode record) or `fact` (distilled by
    # consolidation, `domain.distil`); None for a memory as written. `sources`: the
    # memories (and skipped captures) a fact was distilled from.
    kind: str | None = None
    sources: list[str] = Field(default_factory=list)

    def to_payload(self) -> dict[str, Any]:
        """JSON-safe payload; the creation time as epoch seconds too, for range filters;
        the figures as one keyword (`figures_key`), for the near-duplicate search."""
        data = self.model_dump(mode="json")
        data["created_ts"] = self.created_at.timestamp()
        data[FIGURES_KEY] = figures_key(self.figures)
        return data

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> MemoryRecord:
        return cls.model_validate({k: v for k, v in payload.items() if k not in DERIVED_FIELDS})

    def strength_patch(self, strength: Strength, now: datetime) -> dict[str, Any]:
        """Payload patch for a new strength (`strength_patch`)."""
        return strength_patch(strength, now, state=self.state, pinned=self.pinned)


class StrengthView(BaseModel):
    """The payload fields a strength update reads, declared as on `MemoryRecord`: a recall's
    side effects read these of every memory they touch (~150 at k=50 on the synthetic 10k
    store), where a whole record is ~30 payload fields read, converted and validated."""

    FIELDS: ClassVar[tuple[str, ...]] = ("strength", "pinned", "state")

    strength: Strength
    pinned: bool = False
    state: State = State.ACTIVE

    def strength_patch(self, strength: Strength, now: datetime) -> dict[str, Any]:
        """Payload patch for a new strength (`strength_patch`)."""
        return strength_patch(strength, now, state=self.state, pinned=self.pinned)


class ScoreView(BaseModel):
    """The payload fields a recall scores a candidate by, declared as on `MemoryRecord`:
    every candidate of the pool (50-100) is scored, and only the answer is read whole."""

    strength: Strength
    pinned: bool = False
    scope: Scope = Scope.GLOBAL


class ItemView(BaseModel):
    """The payload fields a recall's context item shows, declared as on `MemoryRecord`: the
    answer (k items and their episode neighbours) is built from these, a quarter of the
    cost of validating each whole record (docs/decisions/0047-context-item-view.md)."""

    id: str
    text: str
    created_at: datetime
    seq: int = 0
    scope: Scope = Scope.GLOBAL
    workspace: str | None = None
    project: str | None = None
    user_id: str | None = None
    episode: str | None = None
    state: State = State.ACTIVE
    superseded_by: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def strength_patch(
    strength: Strength, now: datetime, *, state: State, pinned: bool
) -> dict[str, Any]:
    """Payload patch for a new strength; it also reactivates the memory (state back to
    active) when the memory was archived and the new strength reaches the demotion
    threshold again (strength.reactivates)."""
    patch: dict[str, Any] = {"strength": strength.model_dump(mode="json")}
    if state == State.ARCHIVED and reactivates(strength.at(now, pinned)):
        patch["state"] = State.ACTIVE.value
    return patch


def normalise_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def text_hash(text: str) -> str:
    """Hash of the normalised text: exact duplicates differ only in spacing or case."""
    return hashlib.sha256(normalise_text(text).casefold().encode()).hexdigest()
