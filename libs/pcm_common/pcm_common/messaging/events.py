"""Versioned event schemas carried on Redis Streams (DESIGN §5).

Every event names its schema version so consumers can refuse or upgrade what they do not
understand. `MemoryWritten` carries the text itself so the graph-extractor needs only Redis
and the graph store.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import MemoryRecord
from pcm_common.runtime.request_context import current_request_id
from pcm_common.runtime.tracing import current_carrier

STREAM_WRITTEN = "pcm.memory.written"
STREAM_RECALLED = "pcm.memory.recalled"
STREAM_CHANGED = "pcm.memory.changed"
STREAM_DLQ = "pcm.dlq"
# Requests to reconsolidate one memory (feedback marking it `wrong`):
# `pcm_common.messaging.reconsolidation`.
STREAM_RECONSOLIDATE = "pcm.memory.reconsolidate"

# Consumer groups: one per (service, concern); each group sees every entry of its stream.
GROUP_GRAPH = "graph-extractor"
GROUP_SWEEPER_WRITTEN = "sweeper-written"
GROUP_SWEEPER_RECALLED = "sweeper-recalled"
GROUP_SWEEPER_GRAPH = "sweeper-graph"  # graph-extractor results flowing back to the sweeper
GROUP_GRAPH_CHANGES = "graph-extractor-changes"  # deletes and edits reach the graph
GROUP_SWEEPER_CHANGES = "sweeper-changes"  # repeats and deletes reach the routine index
# Reconsolidation (`pcm_sweeper.reconsolidation`): new writes rewrite the labile memories
# they update; feedback requests make a memory labile and look for what updates it.
GROUP_SWEEPER_RECONSOLIDATE = "sweeper-reconsolidate"
GROUP_SWEEPER_RECONSOLIDATE_REQUESTS = "sweeper-reconsolidate-requests"

STREAM_EXTRACTED = "pcm.memory.extracted"

# Which groups must have processed a stream before the pipeline counts as settled.
PIPELINE_GROUPS: dict[str, tuple[str, ...]] = {
    STREAM_WRITTEN: (GROUP_GRAPH, GROUP_SWEEPER_WRITTEN, GROUP_SWEEPER_RECONSOLIDATE),
    STREAM_RECALLED: (GROUP_SWEEPER_RECALLED,),
    STREAM_EXTRACTED: (GROUP_SWEEPER_GRAPH,),
    STREAM_CHANGED: (GROUP_GRAPH_CHANGES, GROUP_SWEEPER_CHANGES),
    STREAM_RECONSOLIDATE: (GROUP_SWEEPER_RECONSOLIDATE_REQUESTS,),
}


class Event(BaseModel):
    event_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    schema_version: int = 1
    tenant: str
    emitted_at: datetime = Field(default_factory=utcnow)
    # The request that caused it (`X-Request-ID`), taken from the task's context when made:
    # consumers bind it, so their lines of one write carry the same id. Absent in events
    # from before it existed, and in those of scheduled jobs.
    request_id: str | None = Field(default_factory=current_request_id)
    # The W3C trace context (`traceparent`, `tracestate`) of the span that made it, when
    # tracing is on (`pcm_common.runtime.tracing`): the consumers' spans continue the trace.
    trace: dict[str, str] | None = Field(default_factory=current_carrier)


class MemoryWritten(Event):
    type: Literal["memory.written"] = "memory.written"
    memory_id: str
    text: str
    created_at: datetime
    scope: str = "global"
    workspace: str | None = None
    project: str | None = None
    # created | reinforced | merged | repair | reconsolidated (a rewrite by the sweeper:
    # newer information itself, it never reconsolidates another memory)
    status: str = "created"

    @classmethod
    def of(cls, rec: MemoryRecord, status: str = "created") -> MemoryWritten:
        return cls(
            tenant=rec.tenant,
            memory_id=rec.id,
            text=rec.text,
            created_at=rec.created_at,
            scope=rec.scope.value,
            workspace=rec.workspace,
            project=rec.project,
            status=status,
        )


class RecalledItem(BaseModel):
    memory_id: str
    rank: int
    relevance: float


class MemoryRecalled(Event):
    type: Literal["memory.recalled"] = "memory.recalled"
    # Not sent: a query (a hook sends every prompt) may hold what the write firewall would
    # refuse to store, and no consumer needs it. Kept for events already in the stream.
    query: str = ""
    now: datetime
    items: list[RecalledItem]
    # Who asked (`stores.vectors.audience`): activation spreads only to what they see.
    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None


class MemoryChanged(Event):
    type: Literal["memory.changed"] = "memory.changed"
    memory_id: str
    # "repeated": a duplicate was merged into the memory and recorded as a repeat;
    # "reactivated": an archived memory a recall, repeat or spread lifted back to active.
    change: Literal[
        "pinned",
        "unpinned",
        "updated",
        "deleted",
        "archived",
        "reactivated",
        "superseded",
        "repeated",
    ]


class MemoryExtracted(Event):
    type: Literal["memory.extracted"] = "memory.extracted"
    memory_id: str
    entities: list[str]
    relations: int = 0


class ReconsolidationRequested(Event):
    """A memory should be reconsolidated: made labile, and rewritten by the newest stored
    information that updates it, or by the next write that does."""

    type: Literal["memory.reconsolidation_requested"] = "memory.reconsolidation_requested"
    memory_id: str
    reason: str = ""


class DeadLetter(BaseModel):
    stream: str
    group: str
    entry_id: str
    error: str
    deliveries: int
    body: dict[str, Any]
    failed_at: datetime = Field(default_factory=utcnow)
