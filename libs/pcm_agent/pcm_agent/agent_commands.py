"""The `pcm` commands an agent's machine runs: the MCP server, the Claude Code hooks and
their installer, and the checks `wait` and `doctor`."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from pcm_agent.agent_api import key_refusal, plain
from pcm_agent.cli_support import EXIT_REFUSED, EXIT_UNREACHABLE, print_json
from pcm_agent.hooks_install import (
    INSTALLED,
    SettingsScope,
    merge_settings,
    read_settings,
    server_problem,
    settings_path,
)
from pcm_client import DEFAULT_URL, NO_RETRY, PcmClient, PcmError, TransportError

hooks_app = typer.Typer(help="Claude Code hooks: install PCM's into a settings file.")


def mcp(
    transport: str = typer.Option("stdio", help="stdio | streamable-http"),
    host: str = "127.0.0.1",
    port: int = 8090,
    allow_remote: bool = typer.Option(
        False, help="serve HTTP on a non-loopback host: anyone who reaches it acts as the key"
    ),
) -> None:
    """PCM's tools over MCP, as a client of the API at PCM_URL with PCM_API_KEY."""
    from pcm_agent.mcp_server import from_env

    # The MCP endpoint carries no auth of its own: it acts with PCM_API_KEY for whoever
    # reaches it, so it stays on loopback unless asked.
    if transport != "stdio" and host not in ("127.0.0.1", "localhost", "::1") and not allow_remote:
        raise typer.BadParameter(f"{host} is not loopback; pass --allow-remote to serve it")
    server = from_env()
    if transport == "stdio":
        server.run("stdio")
    elif transport == "streamable-http":
        server.run("streamable-http", host=host, port=port)
    else:
        raise typer.BadParameter("transport: stdio or streamable-http")


def wait(
    url: str = typer.Option(DEFAULT_URL, envvar="PCM_URL", help="the API (env PCM_URL)"),
    timeout: float = typer.Option(120.0, help="seconds"),
) -> None:
    """Wait until the service is ready and the background pipeline has caught up."""
    deadline = time.monotonic() + timeout
    last = None
    answered = False  # no answer at all ends with EXIT_UNREACHABLE, as client commands do
    with PcmClient(url, timeout=5, retry=NO_RETRY) as pcm:
        while time.monotonic() < deadline:
            try:
                ready = pcm.ready().ready
                pending = pcm.pipeline()["pending"]
                answered = True
                if ready and pending == 0:
                    typer.echo("ready; pipeline settled")
                    return
                last = f"ready={ready} pending={pending}"
            except TransportError as exc:
                last = str(exc)
            except PcmError as exc:
                answered, last = True, str(exc)
            time.sleep(0.5)
    typer.echo(f"timed out: {last}", err=True)
    raise typer.Exit(1 if answered else EXIT_UNREACHABLE)


def doctor(
    url: str = typer.Option(DEFAULT_URL, envvar="PCM_URL", help="the API (env PCM_URL)"),
) -> None:
    """Print readiness of every dependency and the pipeline backlog, and check that the
    server accepts PCM_API_KEY. Exits 1 when it is not ready or refuses the key."""
    with PcmClient(url, timeout=10, retry=NO_RETRY) as pcm:
        try:
            readiness = pcm.ready()
            typer.echo(json.dumps(plain(readiness)))
            typer.echo(json.dumps(pcm.pipeline()))
        except TransportError as exc:
            typer.echo(f"cannot reach {url}: {exc}", err=True)
            raise typer.Exit(EXIT_UNREACHABLE) from None
        refused = key_refusal(pcm)
    if refused:
        typer.echo(f"auth: {refused}", err=True)
    else:
        typer.echo("auth: PCM_API_KEY accepted")
    if refused or not readiness.ready:
        raise typer.Exit(EXIT_REFUSED)


def hook(
    event: Annotated[
        str,
        typer.Argument(
            help="SessionStart | UserPromptSubmit | PostToolUseFailure | PostToolUse | "
            "PreCompact | Stop"
        ),
    ],
) -> None:
    """Handle one Claude Code hook event (its JSON on stdin). Always exits 0: a problem is
    one line on stderr and nothing on stdout."""
    from pcm_agent.hooks import run_hook

    try:
        raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    except (OSError, ValueError) as exc:
        typer.echo(f"pcm hook {event}: cannot read stdin: {exc}", err=True)
        return
    out, problem = run_hook(event, raw)
    if problem:
        typer.echo(problem, err=True)
    if out:
        typer.echo(out)


def _default_command() -> str:
    """How Claude Code should start pcm: this installation's own entry point when there is
    one (Claude Code's PATH may not have the virtual environment), else `pcm`."""
    local = Path(sys.executable).with_name("pcm")
    found = str(local) if local.exists() else shutil.which("pcm")
    return shlex.quote(found) if found else "pcm"


def hooks_install(
    scope: Annotated[
        SettingsScope,
        typer.Option(
            help="user: ~/.claude/settings.json; project: ./.claude/settings.json (shared); "
            "local: ./.claude/settings.local.json (this machine)"
        ),
    ] = SettingsScope.project,
    settings: Annotated[
        Path | None, typer.Option(help="another settings file to merge into (instead of --scope)")
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="print the merged settings instead of writing them")
    ] = False,
    command: Annotated[
        str | None,
        typer.Option(help="how to start pcm (default: this installation's pcm, by absolute path)"),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(help="first make sure PCM_URL answers and accepts PCM_API_KEY"),
    ] = True,
) -> None:
    """Add PCM's hooks (SessionStart, UserPromptSubmit, PostToolUseFailure, PreCompact, Stop)
    to a Claude Code settings file, keeping everything else in it. Running it again changes
    nothing. Nothing is written when the server does not answer or refuses the key the hooks
    would use (PCM_URL, PCM_API_KEY): those would fail quietly at every prompt."""
    path = settings or settings_path(scope)
    try:
        current = read_settings(path)
    except ValueError as exc:
        typer.echo(f"pcm: {exc}", err=True)
        raise typer.Exit(1) from None
    merged = merge_settings(current, command or _default_command())
    if print_only:
        print_json(merged)
        return
    if check:
        problem = server_problem()
        if problem:
            typer.echo(f"pcm hooks install: {problem}; nothing written to {path}", err=True)
            typer.echo("(set PCM_URL / PCM_API_KEY, or --no-check to write anyway)", err=True)
            raise typer.Exit(EXIT_REFUSED)
    if merged == current:
        typer.echo(f"PCM hooks already in {path}")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    typer.echo(f"PCM hooks ({', '.join(INSTALLED)}) written to {path}")


def register(app: typer.Typer) -> None:
    app.command()(mcp)
    app.command()(wait)
    app.command()(doctor)
    app.command()(hook)
    app.add_typer(hooks_app, name="hooks")


hooks_app.command("install")(hooks_install)
