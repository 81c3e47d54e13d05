"""The MCP tools' parameter types and behaviour hints: each parameter carries the
description (and, through its Literal, the enum) that the tool list shows an agent."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from mcp.types import ToolAnnotations
from pydantic import Field

from pcm_client.models import Importance, Precision, RecallMode, Scope, Signal, State

MemoryId = Annotated[
    str, Field(description="The memory's id, as `store`, `list` or a recall's slots give it.")
]
Text = Annotated[str, Field(description="The memory's text: one fact, decision or outcome.")]
Query = Annotated[str, Field(description="The user's request or question, as asked.")]
ScopeArg = Annotated[
    Scope | None,
    Field(
        description="Where the memory applies: global, workspace or project (name the "
        "workspace or project). Omitted: the narrowest one named."
    ),
]
ScopeFilter = Annotated[
    Scope | None, Field(description="Only memories of this scope: global, workspace or project.")
]
Workspace = Annotated[str | None, Field(description="Workspace name (e.g. a repository).")]
Project = Annotated[str | None, Field(description="Project name within the workspace.")]
UserId = Annotated[
    str | None, Field(description="The user the memory belongs to; omitted: shared.")
]
ImportanceArg = Annotated[
    Importance | None,
    Field(description="low, normal or high; omitted: inferred from the text."),
]
Episode = Annotated[
    str | None,
    Field(description="Episode id grouping memories of one session; omitted: assigned."),
]
K = Annotated[
    int | None, Field(description="How many memories to recall (server default 50, max 200).")
]
Compact = Annotated[bool, Field(description="true: the 10 best memories only (smaller prompt).")]
PrecisionArg = Annotated[
    Precision,
    Field(
        description="precise (default): only the memories that clearly answer, at most k "
        "(10 by default), an empty answer when none does; standard: fill the k slots and "
        "their episode context."
    ),
]
ModeArg = Annotated[
    RecallMode,
    Field(
        description="focused (default): the memories that match the request; associative: "
        "also the memories associated with the best of them (similar ones, the rest of "
        "their session, ones naming the same people and things), in an [ASSOCIATIONS] "
        "section: for brainstorming or when the direct answer is not enough."
    ),
]
IncludeArchived = Annotated[
    bool, Field(description="true: also search memories demoted by disuse.")
]
Pinned = Annotated[
    bool, Field(description="true: pin (delivered with every recall in its scope); false: unpin.")
]
PinnedFilter = Annotated[
    bool | None, Field(description="true: only pinned memories; false: only unpinned.")
]
StateFilter = Annotated[
    State | None, Field(description="Only memories in this state: active, archived, superseded.")
]
Limit = Annotated[int, Field(description="Memories per page (1-500).")]
Offset = Annotated[
    str | None, Field(description="The previous page's `next_offset`; omitted: the first page.")
]
Now = Annotated[
    datetime | None,
    Field(description="ISO 8601 time to run the job as of; omitted: the server's clock."),
]
NewText = Annotated[
    str | None,
    Field(
        description="Replacement text; the earlier text stays in the memory's history and "
        "the new one is screened by the write firewall."
    ),
]
NewImportance = Annotated[
    Importance | None, Field(description="New importance: low, normal or high.")
]
NewPinned = Annotated[bool | None, Field(description="true: pin; false: unpin.")]
NewState = Annotated[
    State | None,
    Field(description="New state: active (restore), archived (demote) or superseded."),
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(description="Replacement metadata: a small JSON object of your own keys."),
]

SignalArg = Annotated[
    Signal,
    Field(
        description="helpful: the memory helped (it ranks higher and is reinforced); "
        "not_helpful: it did not (it ranks lower); wrong: what it says is wrong (it ranks "
        "lower and is rewritten from newer information)."
    ),
]
RecallIdArg = Annotated[
    str | None,
    Field(
        description="The recall that delivered the memory (its recall_id): the signal then "
        "applies to queries like that recall's; omitted: a smaller change for every query."
    ),
]

# Hints for the client (MCP tool annotations); PCM is a closed store, never the open world.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
