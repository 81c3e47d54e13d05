"""The `pcm` commands that move a tenant's data: `pcm export` (JSON Lines, with a progress
bar), `pcm import` (reads an export back), `pcm erase` (everything of a user, workspace or
project). Clients of the HTTP API at PCM_URL with PCM_API_KEY (import and erase need an
admin key)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pcm_agent.cli_support import (
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    Project,
    ScopeName,
    StateName,
    User,
    Workspace,
    print_json,
    unreached,
)
from pcm_client import PcmClient, PcmError

T = TypeVar("T")
_ERR = Console(stderr=True)
Target = Annotated[
    str, typer.Argument(metavar="FILE", help='the export file; "-" for stdout / stdin')
]


def progress_bar(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_ERR,
        disable=quiet or not _ERR.is_terminal,
    )


def client_call(fn: Callable[[PcmClient], T]) -> T:
    """Run `fn` with a blocking client of PCM_URL and PCM_API_KEY; a refusal or an
    unreachable server ends the command (as `cli_support.call`)."""
    try:
        with PcmClient(timeout=120.0) as api:
            return fn(api)
    except PcmError as exc:
        typer.echo(f"pcm: {exc}", err=True)
        raise typer.Exit(EXIT_UNREACHABLE if unreached(exc) else EXIT_REFUSED) from None


@contextmanager
def _opened(path: str, mode: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdout if "w" in mode else sys.stdin
        return
    with Path(path).open(mode, encoding="utf-8") as f:
        yield f


def export(
    target: Target = "-",
    workspace: Workspace = None,
    project: Project = None,
    user: User = None,
    scope: Annotated[ScopeName | None, typer.Option(help="only this scope")] = None,
    state: Annotated[StateName | None, typer.Option(help="only this state")] = None,
    vectors: Annotated[
        bool, typer.Option("--vectors", help="include the dense vectors (no re-embedding)")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Write the tenant's memories (or one user's, workspace's or project's) as JSON Lines."""

    def run(api: PcmClient) -> int:
        written = 0
        lines = api.export(
            vectors=vectors,
            workspace=workspace,
            project=project,
            user_id=user,
            scope=scope.value if scope else None,
            state=state.value if state else None,
        )
        with _opened(target, "w") as out, progress_bar(quiet) as bar:
            task = bar.add_task("exporting", total=None)
            for line in lines:
                if line.get("kind") == "header":
                    bar.update(task, total=line.get("count"))
                else:
                    written += 1
                    bar.advance(task)
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        return written

    written = client_call(run)
    typer.echo(f"exported {written} memories", err=True)


def import_(
    source: Target,
    as_json: Annotated[bool, typer.Option("--json", help="print the whole answer")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Import an export (ids kept: memories already here are left as they are, so running
    it again stores nothing new). Needs an admin key."""

    def run(api: PcmClient) -> Any:
        with _opened(source, "r") as f:
            lines = [line for line in f if line.strip()]
        memories = sum(1 for line in lines if '"header"' not in line[:200])
        with progress_bar(quiet) as bar:
            task = bar.add_task("importing", total=memories)
            return api.import_lines(lines, progress=lambda n: bar.advance(task, n))

    out = client_call(run)
    if as_json:
        print_json(out.model_dump(mode="json"))
        return
    typer.echo(
        f"imported {out.imported}, already here {out.existing}, skipped {out.skipped}, "
        f"re-embedded {out.reembedded}, redacted {out.redacted}, refused {len(out.refused)}"
    )
    for r in out.refused:
        typer.echo(f"  line {r.line}: {r.id} {r.error}", err=True)


def erase(
    workspace: Workspace = None,
    project: Project = None,
    user: User = None,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
) -> None:
    """Erase everything of a user, workspace or project: memories, episode records, graph
    facts, routine entries, stream entries and keys. Needs an admin key; cannot be undone."""
    if not (user or workspace or project):
        raise typer.BadParameter("name a --user, a --workspace or a --project")
    named = ", ".join(
        f"{k} {v}" for k, v in (("user", user), ("workspace", workspace), ("project", project)) if v
    )
    if not yes:
        typer.confirm(f"Erase everything of {named}?", abort=True)
    out = client_call(lambda api: api.erase(user_id=user, workspace=workspace, project=project))
    print_json(out.model_dump(mode="json"))


def register(app: typer.Typer) -> None:
    app.command()(export)
    app.command("import")(import_)
    app.command()(erase)
