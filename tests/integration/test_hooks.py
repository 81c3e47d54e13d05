"""`pcm hook EVENT` as Claude Code runs it (a separate process, the event's JSON on stdin,
stdout read as the hook's answer), against the real all-in-one server; and
`pcm hooks install` on a settings file."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pcm_agent.hooks_install import INSTALLED
from pcm_cli.main import app
from pcm_client import AsyncPcmClient
from tests.conftest import free_port, settle

RUN = uuid.uuid4().hex[:8]
SESSION = f"sess-{RUN}"


# Where the hooks keep their state (when Stop last consolidated): this run's own.
STATE_DIR = Path(tempfile.mkdtemp(prefix=f"pcm-hooks-{RUN}-"))


def base_env(url: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCM_")}
    own = {"PCM_URL": url, "PCM_API_KEY": "key-a", "PCM_HOOK_STATE_DIR": str(STATE_DIR)}
    return env | own | more


async def hook(
    event: str, payload: dict[str, Any] | str, env: dict[str, str], *, command: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the hook as its own process, as Claude Code does."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    argv: list[str] | str = (
        command if command else [sys.executable, "-m", "pcm_agent.cli", "hook", event]
    )
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        input=data,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        shell=command is not None,
        check=False,
    )


def common(event: str, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": f"/tmp/claude/{SESSION}.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }


def context_of(result: subprocess.CompletedProcess[str], event: str) -> str:
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    context: str = out["hookSpecificOutput"]["additionalContext"]
    return context


async def project_memories(client: AsyncPcmClient, project: str) -> list[dict[str, Any]]:
    await settle(client)
    return (await client.list_memories(project=project, limit=500)).items


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository: hooks name the project after its top-level folder."""
    top = tmp_path_factory.mktemp("hooks") / f"juniper-{RUN}"
    (top / "src" / "api").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    return top


async def test_prompt_is_stored_then_recalled_as_context(
    pcm_url: str, pcm_a: AsyncPcmClient, repo: Path
) -> None:
    env = base_env(pcm_url)
    cwd = repo / "src" / "api"
    project = repo.name
    prompt = (
        "For the Juniper release we decided to freeze the public API schema on Thursday "
        "and tag it v2.4 before the partner demo."
    )
    first = await hook(
        "UserPromptSubmit", common("UserPromptSubmit", cwd) | {"prompt": prompt}, env
    )
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    if first.stdout:  # nothing was known yet; whatever it says must be valid hook JSON
        context_of(first, "UserPromptSubmit")

    stored = [m for m in await project_memories(pcm_a, project) if m["text"] == prompt]
    assert len(stored) == 1
    mem = stored[0]
    assert mem["source"] == "hook" and mem["scope"] == "project" and mem["project"] == project
    assert mem["metadata"]["hook"] == "UserPromptSubmit"
    assert mem["metadata"]["session_id"] == SESSION

    question = "When do we freeze the Juniper API schema?"
    later = await hook(
        "UserPromptSubmit", common("UserPromptSubmit", cwd) | {"prompt": question}, env
    )
    context = context_of(later, "UserPromptSubmit")
    assert "Thursday" in context and "[SITUATIONAL CONTEXT]" in context

    # A slash command is not a memory.
    before = len(await project_memories(pcm_a, project))
    slash = await hook(
        "UserPromptSubmit", common("UserPromptSubmit", cwd) | {"prompt": "/compact"}, env
    )
    assert slash.returncode == 0 and slash.stdout == ""
    after = await project_memories(pcm_a, project)
    assert len(after) == before and all(m["text"] != "/compact" for m in after)


async def test_session_start_delivers_pinned_rules(
    pcm_url: str, pcm_a: AsyncPcmClient, tmp_path: Path
) -> None:
    project = f"rules-{RUN}"
    rule = "Always run the migration linter before merging schema changes."
    r = await pcm_a.store(rule, scope="project", project=project, pinned=True)
    assert r.status == "created", r
    await settle(pcm_a)
    env = base_env(pcm_url, PCM_PROJECT=project)
    result = await hook(
        "SessionStart", common("SessionStart", tmp_path) | {"source": "startup"}, env
    )
    context = context_of(result, "SessionStart")
    assert "[ASKER CONTEXT]" in context and rule in context and project in context

    # Another project does not see that project's rule.
    other = await hook(
        "SessionStart",
        common("SessionStart", tmp_path) | {"source": "startup"},
        base_env(pcm_url, PCM_PROJECT=f"elsewhere-{RUN}"),
    )
    assert other.returncode == 0
    assert rule not in other.stdout


async def test_tool_failures_are_stored_and_successes_are_not(
    pcm_url: str, pcm_a: AsyncPcmClient, tmp_path: Path
) -> None:
    project = f"tools-{RUN}"
    env = base_env(pcm_url, PCM_PROJECT=project)
    failure = common("PostToolUseFailure", tmp_path) | {
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests/test_tax.py", "description": "Run tax tests"},
        "tool_use_id": "toolu_01FAIL",
        "error": "Exit code 1\nFAILED tests/test_tax.py::test_round_half_up - assert 10.0 == 10.01"
        + "\nline three\nline four\nline five\nline six is past the head",
        "is_interrupt": False,
    }
    result = await hook("PostToolUseFailure", failure, env)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""

    success = common("PostToolUse", tmp_path) | {
        "tool_name": "Bash",
        "tool_input": {"command": "ls src"},
        "tool_response": {"stdout": "api\nweb\n", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_01OK",
    }
    result = await hook("PostToolUse", success, env)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""

    # A PostToolUse whose response reports the error in-band counts as a failure too.
    in_band = common("PostToolUse", tmp_path) | {
        "tool_name": "mcp__db__query",
        "tool_input": {"query": "select * from invoices_2019"},
        "tool_response": {
            "isError": True,
            "content": [{"type": "text", "text": 'relation "invoices_2019" does not exist'}],
        },
    }
    assert (await hook("PostToolUse", in_band, env)).returncode == 0

    # The user pressing Esc is not a failure worth remembering.
    interrupted = failure | {"tool_input": {"command": "sleep 600"}, "is_interrupt": True}
    assert (await hook("PostToolUseFailure", interrupted, env)).returncode == 0

    texts = sorted(m["text"] for m in await project_memories(pcm_a, project))
    assert texts == [
        "Tool Bash failed: `pytest -q tests/test_tax.py` -> Exit code 1 / FAILED "
        "tests/test_tax.py::test_round_half_up - assert 10.0 == 10.01 / line three / "
        "line four / line five",
        "Tool mcp__db__query failed: `select * from invoices_2019` -> "
        'relation "invoices_2019" does not exist',
    ]
    mems = await project_memories(pcm_a, project)
    assert all(m["source"] == "hook" and m["scope"] == "project" for m in mems)
    assert {m["metadata"]["tool_name"] for m in mems} == {"Bash", "mcp__db__query"}

    huge = failure | {"error": "x" * 50_000, "tool_input": {"command": "make " + "y" * 5_000}}
    assert (await hook("PostToolUseFailure", huge, env)).returncode == 0
    longest = max(len(m["text"]) for m in await project_memories(pcm_a, project))
    assert longest <= 1_000


@pytest.mark.parametrize("event", ["Stop", "PreCompact"])
async def test_stop_and_precompact_run_consolidation(
    event: str, pcm_url: str, pcm_a: AsyncPcmClient, tmp_path: Path
) -> None:
    project = f"cons-{event.lower()}-{RUN}"
    two_days_ago = datetime.now(UTC) - timedelta(days=2)
    for n, text in enumerate(
        [
            "Kicked off the Birch data migration dry run.",
            "The Birch dry run found 14 orphaned invoice rows.",
            "Fixed the orphaned rows and reran the Birch dry run cleanly.",
        ]
    ):
        r = await pcm_a.store(
            text,
            scope="project",
            project=project,
            episode=f"ep-{project}",
            created_at=two_days_ago + timedelta(minutes=5 * n),
        )
        assert r.status == "created", r
    before = await project_memories(pcm_a, project)
    assert not [m for m in before if m["source"] == "consolidation"]

    payload = common(event, tmp_path) | (
        {"stop_hook_active": False} if event == "Stop" else {"trigger": "auto"}
    )
    state = tmp_path / "state"  # no earlier Stop: this one consolidates
    env = base_env(pcm_url, PCM_PROJECT=project, PCM_HOOK_STATE_DIR=str(state))
    result = await hook(event, payload, env)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""

    records = [m for m in await project_memories(pcm_a, project) if m["source"] == "consolidation"]
    assert len(records) == 1 and "14 orphaned invoice rows" in records[0]["text"]


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "Remember that the Larch cluster runs Postgres 16."}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {}, "error": "boom"}),
        ("Stop", {"stop_hook_active": False}),
    ],
)
async def test_a_dead_server_never_breaks_the_agent(
    event: str, payload: dict[str, Any], tmp_path: Path
) -> None:
    env = base_env(f"http://127.0.0.1:{free_port()}")
    result = await hook(event, common(event, tmp_path) | payload, env)
    assert result.returncode == 0 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach PCM" in lines[0] and event in lines[0]


async def test_bad_input_and_slow_servers_exit_zero_quietly(tmp_path: Path) -> None:
    env = base_env(f"http://127.0.0.1:{free_port()}")
    garbage = await hook("UserPromptSubmit", "{not json", env)
    assert garbage.returncode == 0 and garbage.stdout == "" and garbage.stderr.strip()
    unknown = await hook("NoSuchEvent", "{}", env)
    assert unknown.returncode == 0 and unknown.stdout == "" and "unknown event" in unknown.stderr

    # A server that accepts the connection and never answers: the recall timeout ends it.
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        slow_env = base_env(
            f"http://127.0.0.1:{port}",
            PCM_HOOK_RECALL_TIMEOUT_S="0.5",
            PCM_HOOK_STORE_TIMEOUT_S="0.5",
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        result = await hook(
            "UserPromptSubmit",
            common("UserPromptSubmit", tmp_path) | {"prompt": "What does the Larch cluster run?"},
            slow_env,
        )
        took = loop.time() - started
    assert result.returncode == 0 and result.stdout == ""
    assert "did not answer within 0.5 s" in result.stderr
    assert took < 10


# ---- pcm hooks install -------------------------------------------------------------------------


def install(*args: str) -> Any:
    """`pcm hooks install` without its server check (tested on its own below)."""
    result = CliRunner().invoke(app, ["hooks", "install", "--no-check", *args])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def test_install_merges_into_existing_settings_once(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }
    settings.write_text(json.dumps(theirs))

    install("--settings", str(settings))
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == theirs["permissions"]
    assert merged["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    stop_commands = [h["command"] for g in merged["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands[0] == "notify-send done" and len(stop_commands) == 2
    for event in INSTALLED:
        ours = [
            h
            for g in merged["hooks"][event]
            for h in g["hooks"]
            if h["command"].endswith(f"pcm hook {event} || true")
        ]
        assert len(ours) == 1 and ours[0]["type"] == "command" and ours[0]["timeout"] > 0
    assert "PostToolUse" not in merged["hooks"]  # failures arrive as PostToolUseFailure

    written = settings.read_text()
    again = install("--settings", str(settings))
    assert "already" in again.stdout and settings.read_text() == written

    # Another way of starting pcm replaces PCM's entries instead of adding to them.
    install("--settings", str(settings), "--command", "uv run --directory /opt/pcm pcm")
    relaunched = json.loads(settings.read_text())
    for event in INSTALLED:
        commands = [h["command"] for g in relaunched["hooks"][event] for h in g["hooks"]]
        assert commands.count(f"uv run --directory /opt/pcm pcm hook {event} || true") == 1
        assert not [c for c in commands if f"hook {event}" in c and "/opt/pcm" not in c]


def test_install_print_writes_nothing(tmp_path: Path) -> None:
    settings = tmp_path / "fresh" / "settings.json"
    printed = json.loads(install("--settings", str(settings), "--print").stdout)
    assert not settings.exists()
    assert set(printed) == {"hooks"} and set(printed["hooks"]) == set(INSTALLED)


async def test_the_installed_command_runs(pcm_url: str, tmp_path: Path) -> None:
    """The command `hooks install` writes starts this installation's pcm by itself."""
    settings = tmp_path / "settings.json"
    install("--settings", str(settings))
    command = json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    result = await hook(
        "Stop",
        common("Stop", tmp_path) | {"stop_hook_active": False},
        base_env(pcm_url),
        command=command,
    )
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
