"""`pcm governance`: scope policies (capture mode, retention, a cap on active memories),
through the HTTP API at PCM_URL with PCM_API_KEY."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from pcm_agent.cli_support import AsJson, CaptureModeName, Project, Workspace, call, print_json
from pcm_client.models import Scope

governance_app = typer.Typer(
    help="Scope policies: capture mode, retention (days) and a cap on active memories."
)


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


def governance_show(
    workspace: Workspace = None,
    project: Project = None,
    as_json: AsJson = False,
) -> None:
    """Every policy of the tenant; with --project or --workspace also the one in force there
    (inherited fields resolved; a project named with its workspace resolves through it)."""
    asked: Scope | None = "project" if project else "workspace" if workspace else None
    out = call(lambda api: api.policies(asked, workspace, project))
    if as_json:
        print_json(out)
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
    print_json(
        call(
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


def governance_clear(workspace: Workspace = None, project: Project = None) -> None:
    """Remove the policy of a project, a workspace, or (neither given) the tenant's default."""
    where = _policy_scope(workspace, project)
    call(lambda api: api.clear_policy(where.scope, where.workspace, where.project))
    typer.echo(f"cleared {where.name}")


governance_app.command("show")(governance_show)
governance_app.command("set")(governance_set)
governance_app.command("clear")(governance_clear)
