"""The Claude Code hooks' pure parts: event names, slash commands, what counts as a tool
failure and how it is written down, the project a cwd names, and the settings merge."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import time
from pathlib import Path

from pcm_agent.hooks import (
    SLASH_COMMAND,
    Hook,
    HookConfig,
    _bounded,
    _url_key,
    canonical_event,
    failure_error,
    failure_text,
    has_context,
    response_error,
    where_of,
)
from pcm_agent.hooks_install import INSTALLED, merge_settings
from pcm_client import AsyncPcmClient, RecallOut


def test_event_names_in_any_spelling() -> None:
    assert canonical_event("UserPromptSubmit") == "UserPromptSubmit"
    assert canonical_event("user-prompt-submit") == "UserPromptSubmit"
    assert canonical_event("post_tool_use_failure") == "PostToolUseFailure"
    assert canonical_event("posttooluse") == "PostToolUse"
    assert canonical_event("Notification") is None


def test_slash_commands() -> None:
    for text in ("/compact", "/clear", "/review the auth module", "/plugin:deploy staging"):
        assert SLASH_COMMAND.match(text), text
    m = SLASH_COMMAND.match("/review the auth module")
    assert m is not None and m.group("args") == "the auth module"
    for text in ("/etc/hosts is missing the db entry", "fix /api/users", "why / how"):
        assert not SLASH_COMMAND.match(text), text


def test_what_counts_as_a_failure() -> None:
    ok = {"stdout": "done", "stderr": "", "interrupted": False, "isImage": False}
    assert response_error(ok) is None
    assert response_error("File written") is None
    assert response_error({"success": True, "filePath": "/x"}) is None
    assert response_error({"exit_code": 0, "stdout": "fine"}) is None
    assert response_error({"exit_code": 2, "stderr": "no such file"}) == "no such file"
    assert response_error({"returncode": 1}) == "exit code 1"
    assert response_error({"success": False, "error": "conflict"}) == "conflict"
    blocks = {"isError": True, "content": [{"type": "text", "text": "timeout"}]}
    assert response_error(blocks) == "timeout"

    base = {"tool_name": "Bash", "tool_input": {"command": "make"}}
    assert failure_error("PostToolUseFailure", base | {"error": "Exit code 2"}) == "Exit code 2"
    assert failure_error("PostToolUseFailure", base | {"error": "", "is_interrupt": False})
    assert failure_error("PostToolUseFailure", base | {"error": "x", "is_interrupt": True}) is None
    assert failure_error("PostToolUse", base | {"tool_response": ok}) is None


def test_failure_text_is_short_and_names_the_call() -> None:
    text = failure_text("Edit", {"file_path": "src/app.py", "old_string": "a"}, "not found\n\n")
    assert text == "Tool Edit failed: `src/app.py` -> not found"
    text = failure_text("Task", {"description": "x", "prompt": "y"}, "boom")
    assert text == 'Tool Task failed: `{"description": "x", "prompt": "y"}` -> boom'
    long = failure_text("Bash", {"command": "echo " + "z" * 2000}, "e\n" * 100 + "E" * 5000)
    assert len(long) <= 1000 and long.startswith("Tool Bash failed: `echo zzz")


def test_context_is_bounded_at_a_line() -> None:
    text = "\n".join(f"- memory {n}" for n in range(2000))
    cut = _bounded(text, 500)
    assert len(cut) <= 500 and cut.endswith("left out]")
    assert cut.splitlines()[-2].startswith("- memory ")
    assert _bounded("short", 500) == "short"
    nothing = {
        "empty": True,
        "asker_context": [],
        "anomaly_flags": [],
        "situational_context": [],
        "episode_context": [],
        "prompt": "No relevant memories found",
        "timings_ms": {},
    }
    assert not has_context(RecallOut.model_validate(nothing))
    pinned = {
        "memory_id": "m",
        "text": "rule",
        "created_at": "2026-01-01T00:00:00Z",
        "score": 1.0,
        "relevance": 1.0,
        "strength": 1.0,
        "scope": "global",
    }
    assert has_context(RecallOut.model_validate(nothing | {"asker_context": [pinned]}))


def test_project_from_env_or_git_top_level(tmp_path: Path) -> None:
    top = tmp_path / "walnut"
    (top / "a" / "b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    cfg = HookConfig.from_env({"PCM_WORKSPACE": "team", "PCM_USER_ID": "ana"})
    where = where_of({"cwd": str(top / "a" / "b")}, cfg)
    assert (where.project, where.workspace, where.user_id) == ("walnut", "team", "ana")
    assert where.scope == "project"

    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    assert where_of({"cwd": str(plain)}, HookConfig()).project == "not-a-repo"

    fixed = HookConfig.from_env({"PCM_PROJECT": "fixed"})
    assert where_of({"cwd": str(top)}, fixed).project == "fixed"


def test_hooks_recall_precisely_for_the_os_user_by_default() -> None:
    cfg = HookConfig.from_env({})
    assert cfg.precision == "precise" and cfg.user_id == getpass.getuser()
    assert HookConfig.from_env({"PCM_USER_ID": "ana"}).user_id == "ana"
    assert HookConfig.from_env({"PCM_HOOK_PRECISION": "Standard"}).precision == "standard"
    assert HookConfig.from_env({"PCM_HOOK_PRECISION": "fuzzy"}).precision == "precise"


def test_config_falls_back_on_bad_values() -> None:
    cfg = HookConfig.from_env(
        {"PCM_HOOK_RECALL_TIMEOUT_S": "soon", "PCM_HOOK_STORE_TIMEOUT_S": "-1"}
    )
    assert (cfg.recall_timeout_s, cfg.store_timeout_s) == (5.0, 2.0)
    assert HookConfig.from_env({"PCM_HOOK_RECALL_TIMEOUT_S": "1.5"}).recall_timeout_s == 1.5


def test_merge_keeps_everything_and_is_idempotent() -> None:
    theirs = {
        "env": {"FOO": "1"},
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "/old/venv/bin/pcm hook UserPromptSubmit"}
                    ]
                }
            ],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "x"}]}
            ],
        },
    }
    once = merge_settings(theirs, "pcm")
    assert theirs["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].startswith("/old")
    assert once["env"] == {"FOO": "1"}
    ups = once["hooks"]["UserPromptSubmit"]
    assert len(ups) == 1
    assert ups[0]["hooks"][0]["command"] == "pcm hook UserPromptSubmit || true"
    starts = [h["command"] for g in once["hooks"]["SessionStart"] for h in g["hooks"]]
    assert starts == ["x", "pcm hook SessionStart || true"]
    assert set(once["hooks"]) == set(INSTALLED)
    assert merge_settings(once, "pcm") == once
    assert json.loads(json.dumps(once)) == once

    # "pcmx hook Stop" or "run-pcm hook Stop" are someone else's commands.
    other = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "run-pcm hook Stop"}]}]}}
    stops = [
        h["command"] for g in merge_settings(other, "pcm")["hooks"]["Stop"] for h in g["hooks"]
    ]
    assert stops == ["run-pcm hook Stop", "pcm hook Stop || true"]
    assert merge_settings({"hooks": None}, "pcm")["hooks"].keys() == set(INSTALLED)
    # A quoted path with spaces (as the installer writes one) is recognised again.
    quoted = merge_settings({}, "'/opt/my tools/pcm'")
    assert merge_settings(quoted, "'/opt/my tools/pcm'") == quoted
    commands = [h["command"] for g in quoted["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ["'/opt/my tools/pcm' hook Stop || true"]


def test_stop_consolidates_at_most_once_per_interval(tmp_path: Path) -> None:
    api = AsyncPcmClient("http://127.0.0.1:1", "k")
    cfg = HookConfig(consolidate_every_s=900.0, state_dir=tmp_path / "state")
    assert Hook(api, cfg)._consolidation_due()  # no run yet: due, and now marked
    assert not Hook(api, cfg)._consolidation_due()  # marked a moment ago
    other = AsyncPcmClient("http://127.0.0.1:2", "k")  # another server has its own mark
    assert Hook(other, cfg)._consolidation_due()
    tenant = AsyncPcmClient("http://127.0.0.1:1", "another-key")  # so has another tenant's key
    assert Hook(tenant, cfg)._consolidation_due()
    assert not any("another-key" in p.name for p in (tmp_path / "state").iterdir())
    mark = tmp_path / "state" / f"consolidated-{_url_key(api.url, api.api_key)}"
    old = time.time() - 901
    os.utime(mark, (old, old))
    assert Hook(api, cfg)._consolidation_due()  # the interval has passed
    every = HookConfig(consolidate_every_s=0.0, state_dir=tmp_path / "state")
    assert Hook(api, every)._consolidation_due() and Hook(api, every)._consolidation_due()
    env = {"PCM_HOOK_CONSOLIDATE_EVERY_S": "0", "PCM_HOOK_STATE_DIR": str(tmp_path)}
    assert HookConfig.from_env(env).consolidate_every_s == 0.0
    assert HookConfig.from_env(env).state_dir == tmp_path
