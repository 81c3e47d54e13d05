"""The MCP server's tools and resources, end to end against the real all-in-one server."""

from __future__ import annotations

import json
from typing import Any

from mcp.client.client import Client

from pcm_agent.mcp_server import build
from pcm_client import AsyncPcmClient
from tests.conftest import settle

WHERE = {"workspace": "mcp-ws", "project": "mcp-proj"}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_mcp_tools_store_recall_pin_forget(pcm_url: str, client_a: Any) -> None:
    async with Client(build(AsyncPcmClient(pcm_url, "key-a"))) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert {
            "store",
            "recall",
            "pin",
            "forget",
            "inspect",
            "list",
            "consolidate",
            "stats",
            "health",
        } <= tools

        fact = "Quinn keeps the build cache on the NAS in rack 3."
        stored = await mcp.call_tool("store", {"text": fact, "scope": "project", **WHERE})
        assert not stored.is_error, text_of(stored)
        mid = stored.structured_content["id"]
        assert stored.structured_content["status"] == "created"
        await settle(client_a)

        recalled = await mcp.call_tool(
            "recall", {"query": "Where is Quinn's build cache?", **WHERE}
        )
        assert "[SITUATIONAL CONTEXT]" in text_of(recalled) and "rack 3" in text_of(recalled)

        assert not (await mcp.call_tool("pin", {"memory_id": mid})).is_error
        inspected = (await mcp.call_tool("inspect", {"memory_id": mid})).structured_content
        assert inspected["pinned"] is True and inspected["source"] == "mcp"
        assert inspected["history"]["versions"][-1]["text"] == fact
        await settle(client_a)
        pins = json.loads((await mcp.read_resource("pcm://pinned")).contents[0].text)
        assert mid in {p["id"] for p in pins}

        # The API's rules hold through MCP: a secret is refused and nothing is stored.
        refused = await mcp.call_tool("store", {"text": "aws key AKIAIOSFODNN7EXAMPLE"})
        assert refused.is_error and "secret_detected" in text_of(refused)
        # k=0 is the API's error, not silently the default k.
        zero = await mcp.call_tool("recall", {"query": "anything", "k": 0})
        assert zero.is_error and "invalid_request" in text_of(zero)
        # Naming a project without a scope stores it in that project.
        named = await mcp.call_tool("store", {"text": "Mira's sprint ends Friday.", **WHERE})
        nid = named.structured_content["id"]
        assert (await mcp.call_tool("inspect", {"memory_id": nid})).structured_content[
            "scope"
        ] == "project"

        stats = (await mcp.call_tool("stats", {})).structured_content
        assert stats["memories"] >= 1 and stats["pinned"] >= 1
        assert (await mcp.call_tool("health", {})).structured_content["ready"] is True

        assert "deleted" in text_of(await mcp.call_tool("forget", {"memory_id": mid}))
        gone = await mcp.call_tool("inspect", {"memory_id": mid})
        assert gone.is_error and "memory_not_found" in text_of(gone)


async def test_mcp_recall_is_precise_by_default(pcm_url: str, client_a: Any) -> None:
    where = {"workspace": "mcp-ws", "project": "mcp-precise"}
    fact = "Ilse moved the nightly backup job to the cron host in Lisbon."
    async with Client(build(AsyncPcmClient(pcm_url, "key-a"))) as mcp:
        for scope in ("project", "workspace"):  # one text in two scopes: two memories
            stored = await mcp.call_tool("store", {"text": fact, "scope": scope, **where})
            assert stored.structured_content["status"] == "created", text_of(stored)
        await settle(client_a)
        query = {"query": "Where did Ilse move the nightly backup job?", **where}
        precise = text_of(await mcp.call_tool("recall", query))
        standard = text_of(await mcp.call_tool("recall", query | {"precision": "standard"}))
        assert precise.count("Lisbon") == 1 and standard.count("Lisbon") == 2
        unrelated = {"query": "Which sourdough starter should I buy?", **where}
        assert text_of(await mcp.call_tool("recall", unrelated)).endswith(
            "No relevant memories found"
        )


async def test_mcp_recall_takes_the_associative_mode(pcm_url: str, client_a: Any) -> None:
    where = {"workspace": "mcp-ws", "project": "mcp-assoc"}
    day = [
        "Tove booked the venue for the Kraków offsite.",
        "The printer on floor two jams on glossy paper.",
        "Standup moves to 10:00 on Thursdays.",
        "Tove wants vegetarian catering for everyone.",
    ]
    async with Client(build(AsyncPcmClient(pcm_url, "key-a"))) as mcp:
        for text in day:
            stored = await mcp.call_tool(
                "store", {"text": text, "scope": "project", "episode": "mcp-assoc-day", **where}
            )
            assert not stored.is_error, text_of(stored)
        await settle(client_a)
        query = {"query": "Which venue did Tove book for the Kraków offsite?", "k": 1, **where}
        focused = text_of(await mcp.call_tool("recall", query | {"precision": "standard"}))
        assoc = text_of(
            await mcp.call_tool("recall", query | {"precision": "standard", "mode": "associative"})
        )
        assert "[ASSOCIATIONS]" not in focused
        assert assoc.startswith(focused) and "[ASSOCIATIONS]" in assoc
        bad = await mcp.call_tool("recall", query | {"mode": "dreamy"})
        assert bad.is_error


async def test_mcp_feedback_tool(pcm_url: str, client_a: Any) -> None:
    where = {"workspace": "mcp-ws", "project": "mcp-feedback"}
    async with Client(build(AsyncPcmClient(pcm_url, "key-a"))) as mcp:
        stored = await mcp.call_tool("store", {"text": "Tomas owns the billing service.", **where})
        mid = stored.structured_content["id"]
        await settle(client_a)
        out = await mcp.call_tool("feedback", {"memory_id": mid, "signal": "helpful"})
        assert not out.is_error, text_of(out)
        assert out.structured_content["changed"] == {mid: "helpful"}
        again = await mcp.call_tool("feedback", {"memory_id": mid, "signal": "helpful"})
        assert again.structured_content["changed"] == {}
        wrong = await mcp.call_tool("feedback", {"memory_id": mid, "signal": "wrong"})
        assert wrong.structured_content["reconsolidation"] == [mid]
        bad = await mcp.call_tool("feedback", {"memory_id": mid, "signal": "great"})
        assert bad.is_error
        unknown = await mcp.call_tool(
            "feedback", {"memory_id": mid, "signal": "helpful", "recall_id": "nope"}
        )
        assert unknown.is_error and "recall_not_found" in text_of(unknown)
