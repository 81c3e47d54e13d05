"""`pcm-client` installs alone (issue 37): a fresh virtual environment, `uv pip install
libs/pcm_client`, is at most 30 MB and holds none of the server's packages; a script run
with it stores and recalls against a real PCM (`pcm dev` in a child process, as `make run`
starts it), through a per-key rate limit that answers 429s the client must wait out."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import server_process
from tests.conftest import TEST_REDIS, service_env
from tests.fresh_venv import SERVER_PACKAGES, fresh_venv, installed, size_bytes

pytestmark = pytest.mark.slow

MAX_BYTES = 30 * 1024 * 1024

# The client must not even bring the web stack the services and the MCP server use.
NOT_FOR_THE_CLIENT = SERVER_PACKAGES | {"fastapi", "starlette", "uvicorn", "typer", "mcp"}

SCRIPT = r"""
import json, sys, time
import pcm_client
from pcm_client import PcmClient

with PcmClient() as pcm:  # PCM_URL and PCM_API_KEY
    text = "The Kestrel data center moved from Dublin to Madrid in May."
    first = pcm.store(text, project="kestrel", idempotency_key="kestrel-move")
    again = pcm.store(text, project="kestrel", idempotency_key="kestrel-move")
    other = pcm.store("Kestrel's backups run at 03:00.", project="kestrel")
    while pcm.pipeline()["pending"]:
        time.sleep(0.2)
    for _ in range(3):  # back to back: past the burst, whatever the machine's pace
        pcm.pipeline()
    recalled = pcm.recall("Where is the Kestrel data center now?", project="kestrel")
    listed = [m["id"] for m in pcm.iter_memories(project="kestrel")]
    server = [m for m in sys.modules if m.split(".")[0] in (
        "pcm_common", "pcm_cli", "pcm_ingest", "pcm_recall", "fastapi", "redis", "qdrant_client"
    )]
    print(json.dumps({
        "module": pcm_client.__file__,
        "first": first.id, "again": again.id, "status": again.status, "other": other.id,
        "top": recalled.situational_context[0].memory_id, "prompt": recalled.prompt,
        "listed": sorted(listed), "server_modules": server,
    }))
"""


async def test_the_client_installs_alone_and_talks_to_a_real_server(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    python = await asyncio.to_thread(fresh_venv, venv, "libs/pcm_client")
    size = size_bytes(venv)
    names = installed(venv)
    print(f"client venv: {size / 2**20:.1f} MB, {sorted(names)}")
    assert size <= MAX_BYTES, f"{size / 2**20:.1f} MB"
    assert "pcm-client" in names and {"httpx", "pydantic"} <= names
    assert not names & NOT_FOR_THE_CLIENT, names & NOT_FOR_THE_CLIENT

    env = {
        **service_env(tmp_path, f"{TEST_REDIS}/14"),
        "PCM_LOG_LEVEL": "ERROR",
        # One request every two seconds per key, two at once: the script's calls come
        # faster, even on a loaded machine, and get 429s with Retry-After, which the
        # client waits out.
        "PCM_RATE_LIMIT_PER_S": "0.5",
        "PCM_RATE_LIMIT_BURST": "2",
    }
    async with server_process(env) as url:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PCM_", "PYTHON"))}
        proc = await asyncio.create_subprocess_exec(
            str(python),
            "-c",
            SCRIPT,
            env=clean | {"PCM_URL": url, "PCM_API_KEY": "key-a"},
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 240)
        assert proc.returncode == 0, err.decode()
        async with httpx.AsyncClient(base_url=url) as c:
            metrics = (await c.get("/metrics")).text
    got = json.loads(out)
    assert Path(got["module"]).is_relative_to(venv)  # the installed copy
    assert got["server_modules"] == []
    assert got["again"] == got["first"] and got["status"] == "created"  # stored once
    assert got["top"] == got["first"] and "Madrid" in got["prompt"]
    assert got["listed"] == sorted([got["first"], got["other"]])
    refused = [
        float(m.group(1))
        for m in re.finditer(
            r'pcm_http_request_seconds_count\{[^}]*status="429"[^}]*\} (\S+)', metrics
        )
    ]
    assert sum(refused) > 0, "the rate limit never answered 429: the retries went untested"
