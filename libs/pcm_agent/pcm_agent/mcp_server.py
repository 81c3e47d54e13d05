"""PCM as an MCP server (DESIGN §6; the mnemos write-up's MCP-native interface): the tools
an agent needs to keep and use memory, over stdio or streamable HTTP.

It is a client of PCM's HTTP API (`PCM_URL`, `PCM_API_KEY`), so the API's rules hold for
every tool unchanged: one key is one tenant, the write firewall screens every store, and
recall returns the rendered PAE slots. Tools: store, recall, pin, update, feedback, forget,
inspect, list, consolidate, stats, health. Resources: `pcm://pinned` (the guardrails recall always
delivers) and `pcm://pipeline` (what the background consumers have left to do).

    pcm mcp                               # stdio, for a local agent
    pcm mcp --transport streamable-http   # http://127.0.0.1:8090/mcp
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from pcm_agent import agent_api
from pcm_agent.agent_api import plain
from pcm_agent.mcp_params import (
    DESTRUCTIVE,
    IDEMPOTENT_WRITE,
    READ_ONLY,
    WRITES,
    Compact,
    Episode,
    ImportanceArg,
    IncludeArchived,
    K,
    Limit,
    MemoryId,
    Metadata,
    ModeArg,
    NewImportance,
    NewPinned,
    NewState,
    NewText,
    Now,
    Offset,
    Pinned,
    PinnedFilter,
    PrecisionArg,
    Project,
    Query,
    RecallIdArg,
    ScopeArg,
    ScopeFilter,
    SignalArg,
    StateFilter,
    Text,
    UserId,
    Workspace,
)
from pcm_client import LIST_MAX, AsyncPcmClient, PcmError
from pcm_client.calls import PatchFields


@contextmanager
def _tool_error() -> Iterator[None]:
    """A refused request reaches the agent as the tool's error text, with PCM's status,
    code and detail (e.g. `422 secret_detected: [...]`); MCP masks any other exception."""
    try:
        yield
    except PcmError as exc:
        raise ToolError(str(exc)) from None


@contextmanager
def _resource_error() -> Iterator[None]:
    try:
        yield
    except PcmError as exc:  # a resource reports anticipated failures as ResourceError
        raise ResourceError(str(exc)) from None


def build(api: AsyncPcmClient) -> MCPServer:
    server: MCPServer = MCPServer(
        "pcm",
        instructions=(
            "PCM is long-term memory. Call `recall` with the user's request before answering "
            "and paste its `prompt` into your context; `store` facts, decisions and outcomes "
            "worth keeping; `pin` rules that must always apply."
        ),
    )

    _add_store_and_recall(server, api)
    _add_edit_tools(server, api)
    _add_read_tools(server, api)
    _add_pipeline_tools(server, api)
    _add_resources(server, api)
    return server


def _add_store_and_recall(server: MCPServer, api: AsyncPcmClient) -> None:
    @server.tool(annotations=WRITES)
    async def store(
        text: Text,
        scope: ScopeArg = None,
        workspace: Workspace = None,
        project: Project = None,
        user_id: UserId = None,
        importance: ImportanceArg = None,
        episode: Episode = None,
    ) -> dict[str, Any]:
        """Store a memory. Returns {id, status}: created, reinforced, merged or redacted."""
        with _tool_error():
            stored = await api.store(
                text,
                source="mcp",
                scope=scope,
                workspace=workspace,
                project=project,
                user_id=user_id,
                importance=importance,
                episode=episode,
            )
        return plain(stored)

    # Read-only to the agent: a recall only strengthens what it delivered (DESIGN §3).
    @server.tool(annotations=READ_ONLY)
    async def recall(
        query: Query,
        k: K = None,
        compact: Compact = False,
        workspace: Workspace = None,
        project: Project = None,
        user_id: UserId = None,
        include_archived: IncludeArchived = False,
        precision: PrecisionArg = "precise",
        mode: ModeArg = "focused",
    ) -> str:
        """Recall what PCM knows for a request: returns the rendered prompt slots (anomaly
        flags, pinned asker context, dated situational context). Precise by default: an
        agent's context gets what clearly answers, or "No relevant memories found"."""
        with _tool_error():
            out = await api.recall(
                query,
                k=k,
                compact=compact,
                workspace=workspace,
                project=project,
                user_id=user_id,
                include_archived=include_archived,
                precision=precision,
                mode=mode,
            )
        return out.prompt


def _patch_fields(
    text: NewText,
    importance: NewImportance,
    pinned: NewPinned,
    state: NewState,
    metadata: Metadata,
) -> PatchFields:
    """The fields an `update` call gives, and only those."""
    fields: PatchFields = {}
    if text is not None:
        fields["text"] = text
    if importance is not None:
        fields["importance"] = importance
    if pinned is not None:
        fields["pinned"] = pinned
    if state is not None:
        fields["state"] = state
    if metadata is not None:
        fields["metadata"] = metadata
    return fields


def _add_edit_tools(server: MCPServer, api: AsyncPcmClient) -> None:
    @server.tool(annotations=IDEMPOTENT_WRITE)
    async def pin(memory_id: MemoryId, pinned: Pinned = True) -> dict[str, Any]:
        """Pin a memory (delivered with every recall in its scope), or unpin it."""
        with _tool_error():
            return plain(await api.pin(memory_id, pinned))

    @server.tool(annotations=IDEMPOTENT_WRITE)
    async def update(
        memory_id: MemoryId,
        text: NewText = None,
        importance: NewImportance = None,
        pinned: NewPinned = None,
        state: NewState = None,
        metadata: Metadata = None,
    ) -> dict[str, Any]:
        """Change a memory: its text (a new version; `inspect` shows the history), importance,
        pin, state or metadata. Only the fields given change. Returns the memory."""
        fields = _patch_fields(text, importance, pinned, state, metadata)
        if not fields:
            raise ToolError("nothing to update: give text, importance, pinned, state or metadata")
        with _tool_error():
            return plain(await api.update(memory_id, **fields))

    # Idempotent: a signal is set, not added; the same feedback again changes nothing.
    @server.tool(annotations=IDEMPOTENT_WRITE)
    async def feedback(
        memory_id: MemoryId, signal: SignalArg, recall_id: RecallIdArg = None
    ) -> dict[str, Any]:
        """Tell PCM whether a recalled memory helped: helpful, not_helpful, or wrong (its
        content is wrong: PCM rewrites it). Returns what changed."""
        with _tool_error():
            return plain(await api.memory_feedback(memory_id, signal, recall_id=recall_id))

    @server.tool(annotations=DESTRUCTIVE)
    async def forget(memory_id: MemoryId) -> str:
        """Delete a memory for good (forgetting by decay never deletes; this does)."""
        with _tool_error():
            await api.delete(memory_id)
        return f"deleted {memory_id}"


def _add_read_tools(server: MCPServer, api: AsyncPcmClient) -> None:
    @server.tool(annotations=READ_ONLY)
    async def inspect(memory_id: MemoryId) -> dict[str, Any]:
        """A memory whole: text, strength now, state, episode, surprisal, supersession,
        and its version history."""
        with _tool_error():
            return await agent_api.inspect(api, memory_id)

    @server.tool(name="list", annotations=READ_ONLY)
    async def list_memories(
        scope: ScopeFilter = None,
        workspace: Workspace = None,
        project: Project = None,
        state: StateFilter = None,
        pinned: PinnedFilter = None,
        user_id: UserId = None,
        limit: Limit = 50,
        offset: Offset = None,
    ) -> dict[str, Any]:
        """List memories, newest first, a page at a time, filtered by scope, state, pin or
        user."""
        with _tool_error():
            page = await api.list_memories(
                scope=scope,
                workspace=workspace,
                project=project,
                state=state,
                pinned=pinned,
                user_id=user_id,
                limit=max(1, min(limit, LIST_MAX)),
                offset=offset,
            )
        return plain(page)


def _add_pipeline_tools(server: MCPServer, api: AsyncPcmClient) -> None:
    @server.tool(annotations=WRITES)
    async def consolidate(now: Now = None) -> dict[str, Any]:
        """Consolidate settled episodes into episode records now (sources are kept)."""
        with _tool_error():
            return plain(await api.consolidate(now))

    @server.tool(annotations=READ_ONLY)
    async def stats() -> dict[str, Any]:
        """Exact counts of memories by state, pinned and episode records, and the pipeline
        backlog."""
        with _tool_error():
            return await agent_api.stats(api)

    @server.tool(annotations=READ_ONLY)
    async def health() -> dict[str, Any]:
        """Whether PCM and its stores are ready (Redis, vectors, graph, models)."""
        try:
            return plain(await api.ready())
        except PcmError as exc:  # unreachable: say so rather than fail the tool
            return {"ready": False, "detail": str(exc)}


def _add_resources(server: MCPServer, api: AsyncPcmClient) -> None:
    @server.resource("pcm://pinned", mime_type="application/json")
    async def pinned_memories() -> str:
        """The pinned memories (guardrails) recall always delivers."""
        with _resource_error():
            page = await api.list_memories(pinned=True, limit=LIST_MAX)
        return json.dumps([{"id": m["id"], "text": m["text"]} for m in page.items])

    @server.resource("pcm://pipeline", mime_type="application/json")
    async def pipeline() -> str:
        """What the background consumers have not processed yet."""
        with _resource_error():
            return json.dumps(await api.pipeline())


def from_env() -> MCPServer:
    """The server for PCM_URL and PCM_API_KEY."""
    return build(AsyncPcmClient())
