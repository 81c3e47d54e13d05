"""What the `pcm` client commands share: exit codes, option types, running one client call
and printing its answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer

from pcm_client import AsyncPcmClient, PcmError, TransportError

T = TypeVar("T")

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


class RecallModeChoice(StrEnum):
    focused = "focused"
    associative = "associative"


class CaptureModeName(StrEnum):
    all = "all"
    manual_only = "manual_only"
    hooks_only = "hooks_only"


Workspace = Annotated[str | None, typer.Option("--workspace", "-w", help="workspace name")]
Project = Annotated[str | None, typer.Option("--project", "-p", help="project name")]
User = Annotated[str | None, typer.Option("--user", "-u", help="user id")]
AsJson = Annotated[bool, typer.Option("--json", help="print the whole answer as JSON")]
MemoryId = Annotated[str, typer.Argument(metavar="ID", help="a memory id")]


def call(fn: Callable[[AsyncPcmClient], Awaitable[T]]) -> T:
    """Run `fn` with a client of PCM_URL and PCM_API_KEY; a refusal or an unreachable
    server ends the command."""

    async def run() -> T:
        async with AsyncPcmClient() as api:
            return await fn(api)

    try:
        return asyncio.run(run())
    except PcmError as exc:
        hint = " (`pcm dev` or `make run`; PCM_URL names the server)" if unreached(exc) else ""
        typer.echo(f"pcm: {exc}{hint}", err=True)
        raise typer.Exit(EXIT_UNREACHABLE if unreached(exc) else EXIT_REFUSED) from None


def unreached(exc: PcmError) -> bool:
    return isinstance(exc, TransportError)


def instant(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r}: an ISO time, e.g. 2026-05-01T09:00:00Z") from None


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))
