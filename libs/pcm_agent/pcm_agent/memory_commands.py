"""The `pcm` commands for memories, as a client of the HTTP API at PCM_URL with PCM_API_KEY:
store, recall, pin, update, forget, inspect, list, consolidate, stats."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from pcm_agent import agent_api
from pcm_agent.agent_api import plain
from pcm_agent.cli_support import (
    AsJson,
    ImportanceName,
    MemoryId,
    Project,
    RecallModeChoice,
    ScopeName,
    StateName,
    User,
    Workspace,
    call,
    instant,
    print_json,
)
from pcm_client.calls import PatchFields


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
    result = call(
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
    precise: Annotated[
        bool, typer.Option(help="only what clearly answers, or nothing (precision: precise)")
    ] = False,
    mode: Annotated[
        RecallModeChoice,
        typer.Option(help="associative: also what the best memories bring to mind"),
    ] = RecallModeChoice.focused,
    as_json: AsJson = False,
) -> None:
    """Recall for a request; prints the rendered prompt slots (or the whole answer)."""
    out = call(
        lambda api: api.recall(
            query,
            k=k,
            compact=compact,
            workspace=workspace,
            project=project,
            user_id=user,
            include_archived=include_archived,
            precision="precise" if precise else None,
            mode="associative" if mode is RecallModeChoice.associative else None,
        )
    )
    if as_json:
        print_json(plain(out))
    else:
        typer.echo(out.prompt)


def pin(
    memory_id: MemoryId,
    off: Annotated[bool, typer.Option("--off", help="unpin instead")] = False,
) -> None:
    """Pin a memory (recall in its scope always delivers it), or unpin it with --off."""
    call(lambda api: api.pin(memory_id, not off))
    typer.echo(f"{'unpinned' if off else 'pinned'} {memory_id}")


def update(
    memory_id: MemoryId,
    text: Annotated[
        str | None, typer.Option(help="new text (the old stays in its history)")
    ] = None,
    importance: Annotated[ImportanceName | None, typer.Option()] = None,
    state: Annotated[StateName | None, typer.Option()] = None,
) -> None:
    """Change a memory's text, importance or state (PATCH); prints the memory as JSON."""
    fields: PatchFields = {}
    if text is not None:
        fields["text"] = text
    if importance is not None:
        fields["importance"] = importance.value
    if state is not None:
        fields["state"] = state.value
    if not fields:
        raise typer.BadParameter("give --text, --importance or --state")
    print_json(plain(call(lambda api: api.update(memory_id, **fields))))


def forget(memory_id: MemoryId) -> None:
    """Delete a memory for good."""
    call(lambda api: api.delete(memory_id))
    typer.echo(f"deleted {memory_id}")


def inspect(memory_id: MemoryId) -> None:
    """A memory whole, with its version history, as JSON."""
    print_json(call(lambda api: agent_api.inspect(api, memory_id)))


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
    page = call(
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
        print_json(plain(page))
        return
    for row in _table(page.items):
        typer.echo(row)
    if page.next_offset:
        typer.echo(f"(more: --offset {page.next_offset})", err=True)


def consolidate(
    now: Annotated[str | None, typer.Option(help="ISO time to run at (simulations)")] = None,
) -> None:
    """Consolidate settled episodes into episode records now (sources are kept)."""
    at = instant(now) if now else None
    print_json(plain(call(lambda api: api.consolidate(at))))


def stats() -> None:
    """Exact counts of memories by state, pinned and episode records, and the pipeline
    backlog, as JSON."""
    print_json(call(agent_api.stats))


def register(app: typer.Typer) -> None:
    app.command()(store)
    app.command()(recall)
    app.command()(pin)
    app.command()(update)
    app.command()(forget)
    app.command()(inspect)
    app.command(name="list")(list_memories)
    app.command()(consolidate)
    app.command()(stats)
