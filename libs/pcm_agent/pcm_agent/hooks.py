"""Claude Code hooks (DESIGN §6): `pcm hook EVENT` reads the event's JSON on stdin, talks to
PCM's HTTP API through `pcm_client`, and answers on stdout as Claude Code expects.

- SessionStart: recall the project's standing context (pinned rules first) and hand it to
  the session as `hookSpecificOutput.additionalContext`.
- UserPromptSubmit: recall for the prompt (compact) as additionalContext and, at the same
  time, store the prompt as an automatic capture (`source: "hook"`, dated when the hook
  starts; the recall sees only older memories; slash commands are not stored).
- PostToolUseFailure, and PostToolUse when its tool response reports an error: store one
  short memory naming the tool, its call and the first lines of the error.
- PreCompact, Stop: run the consolidation job (Stop at most once per
  PCM_HOOK_CONSOLIDATE_EVERY_S, 900 s: it fires after every agent response).

A hook never breaks or stalls the agent: every call has a short timeout, and whatever goes
wrong is one line on stderr with exit status 0 and nothing on stdout. A capture the server
declines (`status: "skipped"`, the capture gate or the scope's capture mode) is a success.

Scope: project from PCM_PROJECT, else the name of the git top-level of the hook's `cwd`
(else of `cwd` itself); workspace from PCM_WORKSPACE; user from PCM_USER_ID, else the OS
user. Recalls are precise (PCM_HOOK_PRECISION): what clearly answers, or nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pcm_agent.hook_config import HookConfig
from pcm_client import NO_RETRY, AsyncPcmClient, PcmError, RecallOut, TransportError
from pcm_client.models import Scope

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "Stop",
)
SESSION_QUERY = "conventions, decisions and rules to follow"
MAX_FAILURE_CHARS = 1_000
MAX_CAPTURE_CHARS = 8_000
MAX_QUERY_CHARS = 2_000
NAME_CHARS = 200  # the API's limit on project / workspace / user names
# `/name` or `/plugin:name` followed by arguments or nothing; "/etc/hosts is gone" is not one.
SLASH_COMMAND = re.compile(r"^/[\w:.-]+(?:\s+(?P<args>.*))?$", re.DOTALL)


def canonical_event(name: str) -> str | None:
    """`UserPromptSubmit`, `user-prompt-submit` and `userpromptsubmit` are the same event."""
    flat = re.sub(r"[-_\s]", "", name).lower()
    return next((e for e in EVENTS if e.lower() == flat), None)


def _url_key(url: str, key: str = "") -> str:
    """Names a server and tenant (the API key, hashed: never written out)."""
    return hashlib.sha256(f"{url}\n{key}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Where:
    project: str | None
    workspace: str | None
    user_id: str | None

    @property
    def scope(self) -> Scope:
        return "project" if self.project else "workspace" if self.workspace else "global"


def git_top_level(cwd: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", cwd, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=1.5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    top = out.stdout.strip()
    return top if out.returncode == 0 and top else None


def where_of(payload: Mapping[str, Any], cfg: HookConfig) -> Where:
    project = cfg.project
    if not project:
        cwd = payload.get("cwd")
        base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        project = Path(git_top_level(base) or base).name or None
    return Where(
        project=project[:NAME_CHARS] if project else None,
        workspace=cfg.workspace[:NAME_CHARS] if cfg.workspace else None,
        user_id=cfg.user_id[:NAME_CHARS] if cfg.user_id else None,
    )


# ---- what a hook says ------------------------------------------------------------------------


def context_output(event: str, context: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def _bounded(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a line end, saying so."""
    if len(text) <= limit:
        return text
    marker = "\n[... more PCM memories left out]"
    cut = text[: max(0, limit - len(marker))]
    if "\n" in cut:
        cut = cut.rsplit("\n", 1)[0]
    return cut + marker


def has_context(recalled: RecallOut) -> bool:
    """Whether a recall found anything: situational memories, pinned ones or a flag."""
    return bool(not recalled.empty or recalled.asker_context or recalled.anomaly_flags)


def render_context(header: str, recalled: RecallOut, limit: int) -> str | None:
    if not has_context(recalled):
        return None
    return _bounded(f"{header}\n{recalled.prompt}", limit)


# ---- tool failures ---------------------------------------------------------------------------


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return " ".join(text.split())


def _text_of(value: Any) -> str:
    """Readable text of an error value: a string, MCP-style content blocks, or JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in value]
        return "\n".join(p for p in parts if p)
    return json.dumps(value, default=str)


def _nonzero(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value != 0


def response_error(response: Any) -> str | None:
    """The error a tool response reports in-band (`is_error`, `success: false`, a non-zero
    exit code, an `error` field), or None when it reports none."""
    if not isinstance(response, dict):
        return None
    codes = ("exit_code", "exitCode", "returncode", "return_code")
    code = next((response[k] for k in codes if k in response), None)
    failed = (
        response.get("is_error") is True
        or response.get("isError") is True
        or response.get("success") is False
        or _nonzero(code)
        or bool(response.get("error"))
    )
    if not failed:
        return None
    for key in ("error", "stderr", "content", "output", "stdout", "message"):
        text = _text_of(response.get(key)).strip()
        if text:
            return text
    return f"exit code {code}" if _nonzero(code) else "failed"


def failure_error(event: str, payload: Mapping[str, Any]) -> str | None:
    """The failure to remember, or None for a success or a call the user interrupted."""
    if payload.get("is_interrupt") is True:
        return None
    if event == "PostToolUseFailure":
        raw = payload.get("error", payload.get("error_message"))
        text = _text_of(raw).strip()
        if text:
            return text
        return response_error(payload.get("tool_response")) or "failed"
    return response_error(payload.get("tool_response"))


def call_summary(tool: str, tool_input: Any) -> str:
    """What was called: the command, the file or pattern, else the input as JSON."""
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "notebook_path", "path", "url", "pattern", "query"):
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value)
        if not tool_input:
            return tool
    return _one_line(tool_input)


def failure_text(tool: str, tool_input: Any, error: str, limit: int = MAX_FAILURE_CHARS) -> str:
    call = call_summary(tool, tool_input)
    if len(call) > 300:
        call = call[:299] + "…"
    lines = [_one_line(line) for line in error.splitlines() if line.strip()][:5]
    text = f"Tool {tool} failed: `{call}` -> {' / '.join(lines) or 'failed'}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- the events ------------------------------------------------------------------------------


class Hook:
    """One hook invocation: `run` returns the JSON to print (or None) and collects
    `problems` (what went wrong, for one line on stderr)."""

    def __init__(self, api: AsyncPcmClient, cfg: HookConfig) -> None:
        self.api = api
        self.cfg = cfg
        self.problems: list[str] = []
        self.down = False  # PCM did not answer: make no further call (each would wait again)

    def _failed(self, what: str, exc: PcmError) -> None:
        self.problems.append(f"{what}: {exc}")
        self.down = self.down or isinstance(exc, TransportError)

    async def run(self, event: str, payload: Mapping[str, Any]) -> dict[str, Any] | None:
        if event == "SessionStart":
            return await self.session_start(payload, where_of(payload, self.cfg))
        if event == "UserPromptSubmit":
            return await self.user_prompt(payload, where_of(payload, self.cfg))
        if event in ("PostToolUse", "PostToolUseFailure"):
            await self.tool_result(event, payload)
            return None
        if event == "PreCompact" or self._consolidation_due():
            await self.consolidate()  # PreCompact always; Stop at most once per interval
        return None

    def _consolidation_due(self) -> bool:
        """Stop fires after every agent response, and a consolidation run reads the whole
        tenant: run it when the last one (by any hook on this machine, for this server) is
        older than `consolidate_every_s`. The time is kept in a small state file."""
        every = self.cfg.consolidate_every_s
        if every <= 0:
            return True
        mark = self.cfg.state_dir / f"consolidated-{_url_key(self.api.url, self.api.api_key)}"
        now = time.time()
        try:
            if now - mark.stat().st_mtime < every:
                return False
        except OSError:
            pass  # never ran (or unreadable): run it
        try:
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
        except OSError as exc:
            self.problems.append(f"state file {mark}: {exc}")
        return True

    def _metadata(self, event: str, payload: Mapping[str, Any], **more: Any) -> dict[str, Any]:
        meta: dict[str, Any] = {"hook": event}
        sid = payload.get("session_id")
        if isinstance(sid, str) and sid:
            meta["session_id"] = sid[:200]
        return meta | {k: v for k, v in more.items() if v}

    async def _recall(
        self, query: str, where: Where, before: datetime | None = None
    ) -> RecallOut | None:
        if self.down:
            return None
        try:
            return await self.api.recall(
                query[:MAX_QUERY_CHARS],
                compact=True,
                precision=self.cfg.precision,
                created_before=before,
                timeout_s=self.cfg.recall_timeout_s,
                project=where.project,
                workspace=where.workspace,
                user_id=where.user_id,
            )
        except PcmError as exc:
            self._failed("recall", exc)
            return None

    async def _store(
        self, text: str, where: Where, metadata: dict[str, Any], at: datetime | None = None
    ) -> None:
        if self.down:
            return
        try:
            await self.api.store(
                text[:MAX_CAPTURE_CHARS],
                source="hook",
                scope=where.scope,
                metadata=metadata,
                created_at=at,
                timeout_s=self.cfg.store_timeout_s,
                project=where.project,
                workspace=where.workspace,
                user_id=where.user_id,
            )
        except PcmError as exc:  # a secret in the capture lands here too: nothing stored
            self._failed("store", exc)

    async def session_start(
        self, payload: Mapping[str, Any], where: Where
    ) -> dict[str, Any] | None:
        topic = f"{where.project}: {SESSION_QUERY}" if where.project else SESSION_QUERY
        recalled = await self._recall(topic, where)
        if recalled is None:
            return None
        label = f" (project {where.project})" if where.project else ""
        context = render_context(
            f"PCM long-term memory{label}: standing rules and context.",
            recalled,
            self.cfg.max_context_chars,
        )
        return context_output("SessionStart", context) if context else None

    async def user_prompt(self, payload: Mapping[str, Any], where: Where) -> dict[str, Any] | None:
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        prompt = prompt.strip()
        slash = SLASH_COMMAND.match(prompt)
        query = (slash.group("args") or "").strip() if slash else prompt
        # The recall and the capture run at once (the prompt waits for this hook); the
        # capture is dated `now` and the recall sees only memories created before it, so
        # the prompt never comes back as its own context.
        now = datetime.now(UTC)
        recalled, _ = await asyncio.gather(
            self._recall(query, where, before=now) if query else _nothing(),
            _nothing()
            if slash
            else self._store(prompt, where, self._metadata("UserPromptSubmit", payload), now),
        )
        context = (
            render_context(
                "PCM long-term memory recalled for this prompt:",
                recalled,
                self.cfg.max_context_chars,
            )
            if recalled is not None
            else None
        )
        return context_output("UserPromptSubmit", context) if context else None

    async def tool_result(self, event: str, payload: Mapping[str, Any]) -> None:
        error = failure_error(event, payload)
        if error is None:
            return
        where = where_of(payload, self.cfg)
        tool = str(payload.get("tool_name") or "tool")
        text = failure_text(tool, payload.get("tool_input"), error)
        await self._store(text, where, self._metadata(event, payload, tool_name=tool[:200]))

    async def consolidate(self) -> None:
        try:
            await self.api.consolidate(timeout_s=self.cfg.job_timeout_s)
        except PcmError as exc:
            if exc.code != "job_running":  # another hook or the scheduler has it in hand
                self._failed("consolidation", exc)


async def _nothing() -> None:
    return None


async def _within(
    hook: Hook, event: str, payload: Mapping[str, Any], budget_s: float, *, close: bool
) -> dict[str, Any] | None:
    """The hook's answer within its budget; the client it made is closed in the same
    event loop as its connection."""
    try:
        return await asyncio.wait_for(hook.run(event, payload), budget_s)
    finally:
        if close:
            await hook.api.aclose()


def parse_payload(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    payload = json.loads(raw)
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    return payload


def run_hook(
    event: str, raw: str, api: AsyncPcmClient | None = None, cfg: HookConfig | None = None
) -> tuple[str, str]:
    """Handle one hook: (what to print on stdout, a line for stderr; each may be empty).
    Never raises."""
    name = canonical_event(event)
    if name is None:
        return "", f"pcm hook: unknown event {event!r}; one of {', '.join(EVENTS)}"
    cfg = cfg or HookConfig.from_env()
    try:
        payload = parse_payload(raw)
        # No retries: each call has a short timeout inside the event's budget, and an
        # agent waits for its hooks; a server that did not answer once is left alone.
        own = api is None
        hook = Hook(api or AsyncPcmClient(timeout=cfg.recall_timeout_s, retry=NO_RETRY), cfg)
        out = asyncio.run(_within(hook, name, payload, cfg.budget_for(name), close=own))
    except TimeoutError:
        return "", f"pcm hook {name}: gave up after {cfg.budget_for(name):g} s"
    except Exception as exc:  # a hook must never break the agent
        return "", _one_line(f"pcm hook {name}: {type(exc).__name__}: {exc}")
    problem = _one_line(f"pcm hook {name}: {'; '.join(hook.problems)}") if hook.problems else ""
    return (json.dumps(out) if out else ""), problem
