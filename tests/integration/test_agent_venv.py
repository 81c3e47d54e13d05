"""`pcm-agent` installs alone (issue 37): in a fresh virtual environment with only
`libs/pcm_agent` installed (and pcm-client, its one PCM dependency), `pcm mcp` starts over
stdio, lists its tools, and stores and recalls through the real server; none of the
server's packages is there, and `pcm` has no server commands."""

from __future__ import annotations

import asyncio
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import settle
from tests.fresh_venv import SERVER_PACKAGES, fresh_venv, installed

pytestmark = pytest.mark.slow

TOOLS = {"store", "recall", "pin", "forget", "inspect", "list", "consolidate", "stats", "health"}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_pcm_mcp_runs_from_the_agent_package_alone(
    pcm_url: str, client_a: httpx.AsyncClient, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    await asyncio.to_thread(fresh_venv, venv, "libs/pcm_agent")
    names = installed(venv)
    print(f"agent venv: {sorted(names)}")
    assert {"pcm-agent", "pcm-client", "mcp", "typer"} <= names
    assert not names & SERVER_PACKAGES, names & SERVER_PACKAGES

    pcm = venv / "bin" / "pcm"
    usage = await asyncio.to_thread(
        subprocess.run, [str(pcm), "--help"], capture_output=True, text=True, check=True
    )
    # The commands panel's rows start with the command's name; the server's are absent.
    commands = set(re.findall(r"^│ ([a-z][\w-]*) ", usage.stdout, flags=re.MULTILINE))
    assert {"mcp", "hook"} <= commands, usage.stdout
    assert not commands & {"serve", "dev"}, usage.stdout

    project = f"agent-venv-{uuid.uuid4().hex[:8]}"
    server = StdioServerParameters(
        command=str(pcm), args=["mcp"], env={"PCM_URL": pcm_url, "PCM_API_KEY": "key-a"}
    )
    async with Client(server) as mcp:
        assert TOOLS <= {t.name for t in (await mcp.list_tools()).tools}
        fact = "The Wren staging cluster runs on four nodes in Porto."
        stored = await mcp.call_tool("store", {"text": fact, "project": project})
        assert not stored.is_error, text_of(stored)
        assert stored.structured_content["status"] == "created"
        await settle(client_a)
        ask = {"query": "Where does the Wren staging cluster run?", "project": project}
        recalled = await mcp.call_tool("recall", ask)
        assert "Porto" in text_of(recalled)
        health = await mcp.call_tool("health", {})
        assert health.structured_content["ready"] is True
