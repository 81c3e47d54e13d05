"""PCM as an MCP server (DESIGN §6; the mnemos write-up's MCP-native interface): the tools
an agent needs to keep and use memory, over stdio or streamable HTTP.

It is a client of PCM's HTTP API (`PCM_URL`, `PCM_API_KEY`), so the API's rules hold for
every tool unchanged: one key is one tenant, the write firewall screens every store, and
recall returns the rendered PAE slots. Tools: store, recall, pin, forget, inspect, list,
consolidate, stats, health. Resources: `pcm://pinned` (the guardrails recall always
delivers) and `pcm://pipeline` (what the background consumers have left to do).

    pcm mcp                               # stdio, for a local agent
    pcm mcp --transport streamable-http   # http://127.0.0.1:8090/mcp
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

DEFAULT_URL = "http://127.0.0.1:8080"
DEV_KEY = "pcm-dev-key"
# Memories read by `stats` (pages of the list endpoint's maximum, 500).
STATS_SCAN = 10_000


class PcmError(ToolError):
    """A refused request, with PCM's error code and detail (e.g. secret_detected): as a
    `ToolError` it reaches the agent as the tool's error text."""


class PcmApi:
    """The few HTTP calls the tools make; errors become `PcmError` with PCM's own code."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url.rstrip("/")
        self.key = key

    async def call(self, method: str, path: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60.0) as c:
                r = await c.request(method, path, **kw)
        except httpx.HTTPError as exc:
            raise PcmError(f"cannot reach PCM at {self.url}: {exc!r}") from None
        if r.status_code >= 400:
            try:
                body = r.json()
                raise PcmError(f"{r.status_code} {body.get('error')}: {body.get('detail')}")
            except ValueError:
                raise PcmError(f"{r.status_code}: {r.text[:300]}") from None
        return r.json() if r.content else None


def build(api: PcmApi) -> MCPServer:
    server: MCPServer = MCPServer(
        "pcm",
        instructions=(
            "PCM is long-term memory. Call `recall` with the user's request before answering "
            "and paste its `prompt` into your context; `store` facts, decisions and outcomes "
            "worth keeping; `pin` rules that must always apply."
        ),
    )

    def _scope(user_id: str | None, workspace: str | None, project: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if user_id:
            out["user_id"] = user_id
        if workspace:
            out["workspace"] = workspace
        if project:
            out["project"] = project
        return out

    @server.tool()
    async def store(
        text: str,
        scope: str = "global",
        workspace: str | None = None,
        project: str | None = None,
        user_id: str | None = None,
        importance: str | None = None,
        episode: str | None = None,
    ) -> dict[str, Any]:
        """Store a memory. scope: global | workspace | project (name the workspace or
        project). importance: low | normal | high (inferred from the text when omitted).
        Returns {id, status}: created, reinforced, merged or redacted."""
        body = {"text": text, "scope": scope, "source": "mcp"}
        body |= _scope(user_id, workspace, project)
        if importance:
            body["importance"] = importance
        if episode:
            body["episode"] = episode
        result: dict[str, Any] = await api.call("POST", "/v1/memories", json=body)
        return result

    @server.tool()
    async def recall(
        query: str,
        k: int | None = None,
        compact: bool = False,
        workspace: str | None = None,
        project: str | None = None,
        user_id: str | None = None,
        include_archived: bool = False,
    ) -> str:
        """Recall what PCM knows for a request: returns the rendered prompt slots (anomaly
        flags, pinned asker context, dated situational context). compact: 10 memories."""
        body: dict[str, Any] = {"query": query, "compact": compact}
        body |= _scope(user_id, workspace, project)
        if k:
            body["k"] = k
        if include_archived:
            body["include_archived"] = True
        out = await api.call("POST", "/v1/recall", json=body)
        return str(out["prompt"])

    @server.tool()
    async def pin(memory_id: str, pinned: bool = True) -> dict[str, Any]:
        """Pin a memory (delivered with every recall in its scope), or unpin it."""
        result: dict[str, Any] = await api.call(
            "PATCH", f"/v1/memories/{memory_id}", json={"pinned": pinned}
        )
        return result

    @server.tool()
    async def forget(memory_id: str) -> str:
        """Delete a memory for good (forgetting by decay never deletes; this does)."""
        await api.call("DELETE", f"/v1/memories/{memory_id}")
        return f"deleted {memory_id}"

    @server.tool()
    async def inspect(memory_id: str) -> dict[str, Any]:
        """A memory whole: text, strength now, state, episode, surprisal, supersession,
        and its version history."""
        memory: dict[str, Any] = await api.call("GET", f"/v1/memories/{memory_id}")
        memory["history"] = await api.call("GET", f"/v1/memories/{memory_id}/history")
        return memory

    @server.tool(name="list")
    async def list_memories(
        scope: str | None = None,
        workspace: str | None = None,
        project: str | None = None,
        state: str | None = None,
        pinned: bool | None = None,
        limit: int = 50,
        offset: str | None = None,
    ) -> dict[str, Any]:
        """List memories (newest pages via `offset`), filtered by scope, state or pin."""
        params: dict[str, Any] = {"limit": max(1, min(limit, 500))}
        for name, value in (
            ("scope", scope),
            ("workspace", workspace),
            ("project", project),
            ("state", state),
            ("offset", offset),
        ):
            if value is not None:
                params[name] = value
        if pinned is not None:
            params["pinned"] = str(pinned).lower()
        result: dict[str, Any] = await api.call("GET", "/v1/memories", params=params)
        return result

    @server.tool()
    async def consolidate(now: str | None = None) -> dict[str, Any]:
        """Consolidate settled episodes into episode records now (sources are kept)."""
        result: dict[str, Any] = await api.call(
            "POST", "/v1/jobs/consolidation", json={"now": now} if now else {}
        )
        return result

    @server.tool()
    async def stats() -> dict[str, Any]:
        """Memories by state and pinned, up to 10,000 read, and the pipeline backlog."""
        counts: dict[str, int] = {}
        pinned = read = 0
        offset: str | None = None
        while read < STATS_SCAN:
            params: dict[str, Any] = {"limit": 500} | ({"offset": offset} if offset else {})
            page = await api.call("GET", "/v1/memories", params=params)
            for m in page["items"]:
                counts[m["state"]] = counts.get(m["state"], 0) + 1
                pinned += bool(m.get("pinned"))
            read += len(page["items"])
            offset = page.get("next_offset")
            if not offset:
                break
        pipeline = await api.call("GET", "/v1/pipeline")
        return {
            "memories": read,
            "by_state": counts,
            "pinned": pinned,
            "complete": offset is None,
            "pending": pipeline["pending"],
        }

    @server.tool()
    async def health() -> dict[str, Any]:
        """Whether PCM and its stores are ready (Redis, vectors, graph, models)."""
        try:
            result: dict[str, Any] = await api.call("GET", "/readyz")
            return result
        except PcmError as exc:  # 503 while a dependency is down: say which
            return {"ready": False, "detail": str(exc)}

    @server.resource("pcm://pinned", mime_type="application/json")
    async def pinned_memories() -> str:
        """The pinned memories (guardrails) recall always delivers."""
        page = await api.call("GET", "/v1/memories", params={"pinned": "true", "limit": 500})
        return json.dumps([{"id": m["id"], "text": m["text"]} for m in page["items"]])

    @server.resource("pcm://pipeline", mime_type="application/json")
    async def pipeline() -> str:
        """What the background consumers have not processed yet."""
        return json.dumps(await api.call("GET", "/v1/pipeline"))

    return server


def from_env() -> MCPServer:
    url = os.environ.get("PCM_URL", DEFAULT_URL)
    return build(PcmApi(url, os.environ.get("PCM_API_KEY", DEV_KEY)))
