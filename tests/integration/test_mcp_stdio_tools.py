"""`pcm mcp` over stdio (issue 36 item 8), against the real all-in-one server: the tool list
describes every parameter (with enums where one applies) and carries the annotations
(`forget` destructive; `recall`, `inspect`, `list`, `stats`, `health` read-only), and the
`update` tool changes a memory through PATCH /v1/memories/{id}, keeping its history."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from pcm_client import AsyncPcmClient
from tests.conftest import settle

READ_ONLY = {"recall", "inspect", "list", "stats", "health"}
ENUMS = {
    "scope": ["global", "workspace", "project"],
    "importance": ["low", "normal", "high"],
    "state": ["active", "archived", "superseded"],
    "mode": ["focused", "associative"],
    "signal": ["helpful", "not_helpful", "wrong"],
}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def stdio(url: str, key: str) -> StdioServerParameters:
    env = {**os.environ, "PCM_URL": url, "PCM_API_KEY": key}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "pcm_cli.main", "mcp"], env=env
    )


def enum_of(schema: dict[str, Any]) -> list[str] | None:
    for option in [schema, *schema.get("anyOf", [])]:
        if "enum" in option:
            return list(option["enum"])
    return None


async def test_tool_list_describes_parameters_and_annotates(pcm_url: str) -> None:
    async with Client(stdio(pcm_url, "key-a")) as mcp:
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
    assert {"store", "recall", "update", "feedback", "forget", "pin"} | READ_ONLY <= set(tools)
    assert "signal" in tools["feedback"].input_schema["properties"]
    for name, tool in tools.items():
        assert tool.description, name
        for param, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{name}.{param} has no description"
            if param in ENUMS:
                assert enum_of(schema) == ENUMS[param], (name, param, schema)
    for name in READ_ONLY:
        ann = tools[name].annotations
        assert ann is not None and ann.read_only_hint is True, name
    forget = tools["forget"].annotations
    assert forget is not None and forget.destructive_hint is True
    assert forget.read_only_hint is False
    for name in ("store", "update", "pin", "feedback", "forget", "consolidate"):
        ann = tools[name].annotations
        assert ann is not None and ann.read_only_hint is False, name


async def test_update_changes_a_memory_and_keeps_history(
    pcm_url: str, pcm_a: AsyncPcmClient
) -> None:
    project = f"mcp-update-{uuid.uuid4().hex[:8]}"
    before = "The Heron deploy window is Tuesday at 14:00."
    after = "The Heron deploy window is Thursday at 09:00."
    async with Client(stdio(pcm_url, "key-a")) as mcp:
        stored = await mcp.call_tool("store", {"text": before, "project": project})
        assert not stored.is_error, text_of(stored)
        mid = stored.structured_content["id"]
        await settle(pcm_a)

        changed = await mcp.call_tool(
            "update",
            {"memory_id": mid, "text": after, "importance": "high", "pinned": True},
        )
        assert not changed.is_error, text_of(changed)
        assert changed.structured_content["text"] == after
        await settle(pcm_a)
        seen = (await mcp.call_tool("inspect", {"memory_id": mid})).structured_content
        assert (seen["text"], seen["importance"], seen["pinned"]) == (after, "high", True)
        texts = [v["text"] for v in seen["history"]["versions"]]
        assert texts[0] == before and texts[-1] == after
        recalled = text_of(
            await mcp.call_tool(
                "recall", {"query": "When is the Heron deploy?", "project": project}
            )
        )
        assert "Thursday" in recalled

        # Bad input is refused and changes nothing.
        empty = await mcp.call_tool("update", {"memory_id": mid})
        assert empty.is_error and "nothing to update" in text_of(empty)
        secret = await mcp.call_tool(
            "update", {"memory_id": mid, "text": "key AKIAIOSFODNN7EXAMPLE"}
        )
        assert secret.is_error and "secret_detected" in text_of(secret)
        bad_state = await mcp.call_tool("update", {"memory_id": mid, "state": "gone"})
        assert bad_state.is_error
        missing = await mcp.call_tool("update", {"memory_id": uuid.uuid4().hex, "text": after})
        assert missing.is_error and "404" in text_of(missing)
        still = await pcm_a.get(mid)
        assert (still.text, still.state) == (after, "active")

    # Another tenant's key cannot see the memory, let alone change it.
    async with Client(stdio(pcm_url, "key-b")) as other:
        foreign = await other.call_tool("update", {"memory_id": mid, "text": "hijacked"})
        assert foreign.is_error and "memory_not_found" in text_of(foreign)
    assert (await pcm_a.get(mid)).text == after
