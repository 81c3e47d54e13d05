"""`pcm hooks install`: PCM's hooks merged into a Claude Code settings file (user, project
or local scope), after checking that the server answers and accepts the key the hooks will
use, so a wrong key or URL fails here, loudly, not quietly at every prompt."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from pcm_agent.agent_api import key_refusal
from pcm_client import NO_RETRY, PcmClient

# What `pcm hooks install` registers. PostToolUse is left out: Claude Code calls it for
# successful tool calls only (failures go to PostToolUseFailure), so it would start a process
# after every tool call to store nothing. `pcm hook PostToolUse` still stores a failure that a
# tool reports in its response, for hosts that send those there.
INSTALLED = ("SessionStart", "UserPromptSubmit", "PostToolUseFailure", "PreCompact", "Stop")
# Claude Code's own limit on a hook command, in seconds (ours are far shorter).
SETTINGS_TIMEOUT_S = {"SessionStart": 15, "UserPromptSubmit": 15}
DEFAULT_SETTINGS_TIMEOUT_S = 10
# Tool events match tool names; "*" is every tool. The other events need no matcher (for
# SessionStart that means every source: startup, resume, clear and compact).
MATCHERS = {"PostToolUse": "*", "PostToolUseFailure": "*"}


class SettingsScope(StrEnum):
    """Claude Code's settings files: yours on every project (user), the project's shared
    one (committed), and the project's own on this machine (local, not committed)."""

    user = "user"
    project = "project"
    local = "local"


def settings_path(scope: SettingsScope, home: Path | None = None, cwd: Path | None = None) -> Path:
    if scope is SettingsScope.user:
        return (home or Path.home()) / ".claude" / "settings.json"
    folder = (cwd or Path.cwd()) / ".claude"
    return folder / ("settings.json" if scope is SettingsScope.project else "settings.local.json")


def server_problem(url: str | None = None, api_key: str | None = None) -> str | None:
    """Why hooks using this server and key would fail (a line to print), or None. Defaults:
    PCM_URL and PCM_API_KEY, as the hooks read them."""
    with PcmClient(url, api_key, timeout=10, retry=NO_RETRY) as pcm:
        return key_refusal(pcm)


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in `path` ({} when there is none); ValueError when it is not a JSON
    object or cannot be read."""
    if not path.exists():
        return {}
    try:
        loaded = json.loads(path.read_text() or "{}")
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return loaded


def hook_entry(event: str, command: str) -> dict[str, Any]:
    return {
        "type": "command",
        # `|| true`: a hook that cannot run (an older pcm without `hook`, a usage error: exit
        # 2) must not block the agent; Claude Code reads exit 2 as "block".
        "command": f"{command} hook {event} || true",
        "timeout": SETTINGS_TIMEOUT_S.get(event, DEFAULT_SETTINGS_TIMEOUT_S),
    }


def _is_ours(hook: Any, event: str) -> bool:
    """A hook command that runs `pcm hook EVENT`, whatever launches pcm (a path, a quoted
    path with spaces, uv run), with or without `|| true`."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    pattern = rf"(^|[\s/\\])pcm(\.exe)?['\"]?\s+hook\s+{event}(\s|$)"
    return re.search(pattern, hook["command"]) is not None


def merge_settings(settings: dict[str, Any], command: str) -> dict[str, Any]:
    """`settings` with PCM's hooks added: any other hook and setting is kept, and a PCM hook
    already there is updated in place, so installing twice changes nothing."""
    merged: dict[str, Any] = json.loads(json.dumps(settings))  # a deep copy
    hooks = merged.get("hooks")
    if not isinstance(hooks, dict):
        hooks = merged["hooks"] = {}
    for event in INSTALLED:
        entry = hook_entry(event, command)
        groups = hooks.get(event)
        if not isinstance(groups, list):
            groups = hooks[event] = []
        found = False
        for group in groups:
            for n, hook in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if _is_ours(hook, event):
                    if not found:
                        group["hooks"][n] = hook | entry
                    found = True
        if not found:
            group = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
            groups.append(group | {"hooks": [entry]})
    return merged
