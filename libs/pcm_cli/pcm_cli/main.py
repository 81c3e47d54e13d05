"""`pcm`: run the services, check a deployment, wait for the pipeline; and, as a client of
the HTTP API at PCM_URL with PCM_API_KEY, store / recall / pin / forget / inspect / list /
consolidate / stats, the Claude Code hooks (`pcm hook EVENT`) and their installer
(`pcm hooks install`).

The services are imported only by the commands that run them: a client command, and above
all a hook, which Claude Code starts for every event, loads no more than httpx and typer.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

# litellm looks up its model cost map on the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import typer

from pcm_cli import agent_api
from pcm_cli.agent_api import plain
from pcm_cli.keys import keys_app
from pcm_client import DEFAULT_URL, NO_RETRY, AsyncPcmClient, PcmClient, PcmError, TransportError
from pcm_client.models import Scope

if TYPE_CHECKING:
    from pcm_common.config import PcmSettings

T = TypeVar("T")
SERVICES = ("ingest", "recall", "graph-extractor", "sweeper")

app = typer.Typer(
    help="PCM (Peripheral Cognitive Mesh): memory for AI agents.", no_args_is_help=True
)
hooks_app = typer.Typer(help="Claude Code hooks: install PCM's into a settings file.")
app.add_typer(hooks_app, name="hooks")
governance_app = typer.Typer(
    help="Scope policies: capture mode, retention (days) and a cap on active memories."
)
app.add_typer(governance_app, name="governance")
app.add_typer(keys_app, name="keys")


def _serve(names: list[str], host: str, port: int, settings: PcmSettings | None = None) -> None:
    import uvicorn

    from pcm_cli.app import build_app

    # uvicorn handles SIGTERM: it stops accepting, then the app's lifespan drains the broker.
    uvicorn.run(
        build_app(names, settings),
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=20,
    )


@app.command()
def dev(host: str = "127.0.0.1", port: int = 8080) -> None:
    """Every service in one process on the embedded default (Qdrant Edge, local models)."""
    from pcm_common.config import PcmSettings

    # A development server: the dev key is allowed (`pcm serve` refuses it elsewhere).
    os.environ.setdefault("PCM_ENV", "dev")
    # Read once: the key printed is the one the server is built with.
    s = PcmSettings()
    key = f"dev key: {s.dev_api_key}" if s.dev_key_enabled else "dev key off"
    typer.echo(f"PCM dev: http://{host}:{port}  (docs at /docs, {key})")
    _serve(list(SERVICES), host, port, s)


@app.command()
def serve(
    service: str = typer.Argument(..., help="ingest | recall | graph-extractor | sweeper"),
    host: str = "0.0.0.0",
    port: int = typer.Option(
        0, help="defaults: ingest 8081, recall 8082, graph-extractor 8083, sweeper 8084"
    ),
) -> None:
    """One service per process (production)."""
    from pcm_cli.app import DEFAULT_PORTS
    from pcm_common.config import PcmSettings

    if service not in SERVICES:
        raise typer.BadParameter(f"unknown service {service!r}; one of {', '.join(SERVICES)}")
    s = PcmSettings()
    refusal = dev_key_refusal(s)
    if refusal:
        typer.echo(refusal, err=True)
        raise typer.Exit(2)
    _serve([service], host, port or DEFAULT_PORTS[service], s)


def dev_key_refusal(s: PcmSettings) -> str | None:
    """Why `pcm serve` must not start, or None: the public dev key would let anyone who
    reaches the port act as tenant `dev`, and a deployment that forgot one variable would
    not notice (the server listens on 0.0.0.0)."""
    if not s.dev_key_enabled or s.env == "dev":
        return None
    return (
        f"pcm serve: refusing to start with the public dev key ({s.dev_api_key!r}) enabled; "
        "set PCM_DEV_KEY_ENABLED=false (keys in PCM_API_KEYS or `pcm keys create`), "
        "or PCM_ENV=dev on a development machine"
    )


@app.command()
def mcp(
    transport: str = typer.Option("stdio", help="stdio | streamable-http"),
    host: str = "127.0.0.1",
    port: int = 8090,
    allow_remote: bool = typer.Option(
        False, help="serve HTTP on a non-loopback host: anyone who reaches it acts as the key"
    ),
) -> None:
    """PCM's tools over MCP, as a client of the API at PCM_URL with PCM_API_KEY."""
    from pcm_cli.mcp_server import from_env

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


@app.command()
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


@app.command()
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


def key_refusal(pcm: PcmClient) -> str | None:
    """Why the server refuses `pcm`'s key (a line to print), or None when it accepts it:
    a call every key's role may make, reading nothing but counts."""
    try:
        pcm.stats()
    except PcmError as exc:
        return f"{exc} (PCM_API_KEY at {pcm.url})"
    return None


# ---- client commands (the HTTP API at PCM_URL with PCM_API_KEY) -----------------------------

EXIT_REFUSED = 1  # PCM answered with an error (its code and detail on stderr)
EXIT_UNREACHABLE = 3  # no answer: not running, wrong PCM_URL, timed out


class ScopeName(StrEnum):
    global_ = "global"
    workspace = "workspace"
    project = "project"


class ImportanceName(StrEnum):
    low = "low"
    normal = "normal"
    high = "high"


class StateName(StrEnum):
    active = "active"
    archived = "archived"
    superseded = "superseded"


Workspace = Annotated[str | None, typer.Option("--workspace", "-w", help="workspace name")]
Project = Annotated[str | None, typer.Option("--project", "-p", help="project name")]
User = Annotated[str | None, typer.Option("--user", "-u", help="user id")]
AsJson = Annotated[bool, typer.Option("--json", help="print the whole answer as JSON")]
MemoryId = Annotated[str, typer.Argument(metavar="ID", help="a memory id")]


def _call(fn: Callable[[AsyncPcmClient], Awaitable[T]]) -> T:
    """Run `fn` with a client of PCM_URL and PCM_API_KEY; a refusal or an unreachable
    server ends the command."""

    async def run() -> T:
        async with AsyncPcmClient() as api:
            return await fn(api)

    try:
        return asyncio.run(run())
    except PcmError as exc:
        hint = " (`pcm dev` or `make run`; PCM_URL names the server)" if _unreached(exc) else ""
        typer.echo(f"pcm: {exc}{hint}", err=True)
        raise typer.Exit(EXIT_UNREACHABLE if _unreached(exc) else EXIT_REFUSED) from None


def _unreached(exc: PcmError) -> bool:
    return isinstance(exc, TransportError)


def _instant(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r}: an ISO time, e.g. 2026-05-01T09:00:00Z") from None


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


@app.command()
def store(
    text: Annotated[str, typer.Argument(help='the memory; "-" reads it from stdin')],
    scope: Annotated[
        ScopeName | None,
        typer.Option(help="default: project when --project is given, else workspace, else global"),
    ] = None,
    workspace: Workspace = None,
    project: Project = None,
    user: User = None,
    importance: Annotated[
        ImportanceName | None, typer.Option(help="inferred from the text when omitted")
    ] = None,
    pin: Annotated[bool, typer.Option("--pin", help="pin it: recall always delivers it")] = False,
    episode: Annotated[
        str | None, typer.Option(help="episode id (default: assigned by time)")
    ] = None,
) -> None:
    """Store a memory; prints its id and status (created, reinforced, merged, redacted)."""
    if text == "-":
        text = sys.stdin.read().strip()
    if not text.strip():
        raise typer.BadParameter("the memory is empty")
    result = _call(
        lambda api: api.store(
            text,
            source="api",
            scope=scope.value if scope else None,
            workspace=workspace,
            project=project,
            user_id=user,
            importance=importance.value if importance else None,
            pinned=pin or None,
            episode=episode,
        )
    )
    if result.status == "skipped":
        typer.echo(f"skipped ({result.reason or 'declined'})")
    else:
        typer.echo(f"{result.id} {result.status}")


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="the request to recall for")],
    k: Annotated[
        int | None, typer.Option("--k", "-k", min=1, max=200, help="situational memories (50)")
    ] = None,
    compact: Annotated[bool, typer.Option(help="10 memories, a smaller prompt")] = False,
    workspace: Workspace = None,
    project: Project = None,
    user: User = None,
    include_archived: Annotated[bool, typer.Option(help="archived memories compete too")] = False,
    as_json: AsJson = False,
) -> None:
    """Recall for a request; prints the rendered prompt slots (or the whole answer)."""
    out = _call(
        lambda api: api.recall(
            query,
            k=k,
            compact=compact,
            workspace=workspace,
            project=project,
            user_id=user,
            include_archived=include_archived,
        )
    )
    if as_json:
        _print_json(plain(out))
    else:
        typer.echo(out.prompt)


@app.command()
def pin(
    memory_id: MemoryId,
    off: Annotated[bool, typer.Option("--off", help="unpin instead")] = False,
) -> None:
    """Pin a memory (recall in its scope always delivers it), or unpin it with --off."""
    _call(lambda api: api.pin(memory_id, not off))
    typer.echo(f"{'unpinned' if off else 'pinned'} {memory_id}")


@app.command()
def forget(memory_id: MemoryId) -> None:
    """Delete a memory for good."""
    _call(lambda api: api.delete(memory_id))
    typer.echo(f"deleted {memory_id}")


@app.command()
def inspect(memory_id: MemoryId) -> None:
    """A memory whole, with its version history, as JSON."""
    _print_json(_call(lambda api: agent_api.inspect(api, memory_id)))


def _table(items: list[dict[str, Any]]) -> list[str]:
    rows = []
    for m in items:
        where = m.get("project") or m.get("workspace") or ""
        scope = f"{m.get('scope', '')}:{where}" if where else str(m.get("scope", ""))
        text = " ".join(str(m.get("text", "")).split())
        rows.append(
            f"{m['id']}  {str(m.get('created_at', ''))[:10]:10}  {m.get('state', ''):10}  "
            f"{'pin' if m.get('pinned') else '   '}  {scope:24}  "
            f"{text[:60] + ('…' if len(text) > 60 else '')}"
        )
    return rows


@app.command(name="list")
def list_memories(
    scope: Annotated[ScopeName | None, typer.Option()] = None,
    workspace: Workspace = None,
    project: Project = None,
    state: Annotated[StateName | None, typer.Option()] = None,
    pinned: Annotated[
        bool | None, typer.Option("--pinned/--unpinned", help="only pinned (or unpinned) ones")
    ] = None,
    user: User = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    offset: Annotated[
        str | None, typer.Option(help="the next_offset the previous page printed")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """List memories, one page at a time, as a table (id, date, state, pin, scope, text)."""
    page = _call(
        lambda api: api.list_memories(
            scope=scope.value if scope else None,
            workspace=workspace,
            project=project,
            state=state.value if state else None,
            pinned=pinned,
            user_id=user,
            limit=limit,
            offset=offset,
        )
    )
    if as_json:
        _print_json(plain(page))
        return
    for row in _table(page.items):
        typer.echo(row)
    if page.next_offset:
        typer.echo(f"(more: --offset {page.next_offset})", err=True)


@app.command()
def consolidate(
    now: Annotated[str | None, typer.Option(help="ISO time to run at (simulations)")] = None,
) -> None:
    """Consolidate settled episodes into episode records now (sources are kept)."""
    at = _instant(now) if now else None
    _print_json(plain(_call(lambda api: api.consolidate(at))))


@app.command()
def stats() -> None:
    """Exact counts of memories by state, pinned and episode records, and the pipeline
    backlog, as JSON."""
    _print_json(_call(agent_api.stats))


# ---- Claude Code hooks ------------------------------------------------------------------------


@app.command()
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
    from pcm_cli.hooks import run_hook

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


class CaptureModeName(StrEnum):
    all = "all"
    manual_only = "manual_only"
    hooks_only = "hooks_only"


@dataclass(frozen=True)
class PolicyScope:
    scope: Scope
    workspace: str | None = None
    project: str | None = None

    @property
    def name(self) -> str:
        return self.project or self.workspace or "global"


def _policy_scope(workspace: str | None, project: str | None) -> PolicyScope:
    """A policy is set on a project, else a workspace, else global (never both names)."""
    if project and workspace:
        raise typer.BadParameter("a policy is set on a project or on a workspace, not both")
    if project:
        return PolicyScope("project", project=project)
    if workspace:
        return PolicyScope("workspace", workspace=workspace)
    return PolicyScope("global")


@governance_app.command("show")
def governance_show(
    workspace: Workspace = None,
    project: Project = None,
    as_json: AsJson = False,
) -> None:
    """Every policy of the tenant; with --project or --workspace also the one in force there
    (inherited fields resolved; a project named with its workspace resolves through it)."""
    asked: Scope | None = "project" if project else "workspace" if workspace else None
    out = _call(lambda api: api.policies(asked, workspace, project))
    if as_json:
        _print_json(out)
        return
    for p in out["policies"]:
        name = p.get("project") or p.get("workspace") or ""
        scope = f"{p['scope']}:{name}" if name else p["scope"]
        typer.echo(
            f"{scope:30}  capture {p.get('capture_mode') or '-':12}  "
            f"retention {p.get('retention_days') or '-'} d  cap {p.get('max_memories') or '-'}"
        )
    if not out["policies"]:
        typer.echo("no policies (everything captured, kept forever, no cap)")
    if "effective" in out:
        e = out["effective"]
        typer.echo(
            f"in force: capture {e['capture_mode']}, retention "
            f"{e['retention_days'] or 'none'}, cap {e['max_memories'] or 'none'}"
        )


@governance_app.command("set")
def governance_set(
    workspace: Workspace = None,
    project: Project = None,
    capture: Annotated[
        CaptureModeName | None, typer.Option(help="which captures the scope keeps")
    ] = None,
    retention_days: Annotated[
        int | None, typer.Option(min=1, help="delete memories created longer ago")
    ] = None,
    max_memories: Annotated[
        int | None, typer.Option(min=1, help="archive the weakest over this many active")
    ] = None,
) -> None:
    """Replace the policy of a project, a workspace, or (neither given) the tenant's
    default. It replaces the whole policy: an option left out is not kept from the old one
    but inherited from the wider scope (no options at all clears the policy)."""
    where = _policy_scope(workspace, project)
    _print_json(
        _call(
            lambda api: api.set_policy(
                where.scope,
                workspace=where.workspace,
                project=where.project,
                capture_mode=capture.value if capture else None,
                retention_days=retention_days,
                max_memories=max_memories,
            )
        )
    )


@governance_app.command("clear")
def governance_clear(workspace: Workspace = None, project: Project = None) -> None:
    """Remove the policy of a project, a workspace, or (neither given) the tenant's default."""
    where = _policy_scope(workspace, project)
    _call(lambda api: api.clear_policy(where.scope, where.workspace, where.project))
    typer.echo(f"cleared {where.name}")


@hooks_app.command("install")
def hooks_install(
    settings: Annotated[
        Path, typer.Option(help="the Claude Code settings file to merge into")
    ] = Path(".claude/settings.json"),
    print_only: Annotated[
        bool, typer.Option("--print", help="print the merged settings instead of writing them")
    ] = False,
    command: Annotated[
        str | None,
        typer.Option(help="how to start pcm (default: this installation's pcm, by absolute path)"),
    ] = None,
) -> None:
    """Add PCM's hooks (SessionStart, UserPromptSubmit, PostToolUseFailure, PreCompact, Stop)
    to a Claude Code settings file, keeping everything else in it. Running it again changes
    nothing."""
    from pcm_cli.hooks import INSTALLED, merge_settings

    current: dict[str, Any] = {}
    if settings.exists():
        try:
            loaded = json.loads(settings.read_text() or "{}")
        except (OSError, ValueError) as exc:
            typer.echo(f"pcm: cannot read {settings}: {exc}", err=True)
            raise typer.Exit(1) from None
        if not isinstance(loaded, dict):
            typer.echo(f"pcm: {settings} does not hold a JSON object", err=True)
            raise typer.Exit(1)
        current = loaded
    merged = merge_settings(current, command or _default_command())
    if print_only:
        _print_json(merged)
        return
    if merged == current:
        typer.echo(f"PCM hooks already in {settings}")
        return
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    typer.echo(f"PCM hooks ({', '.join(INSTALLED)}) written to {settings}")


if __name__ == "__main__":
    app()
