"""`pcm feedback`: signals on what a recall delivered, or on one memory
(docs/api.md, "Retrieval feedback")."""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from pcm_agent.agent_api import plain
from pcm_agent.cli_support import call, print_json
from pcm_client.models import Signal


class SignalName(enum.StrEnum):
    helpful = "helpful"
    not_helpful = "not_helpful"
    wrong = "wrong"


SIGNALS: dict[SignalName, Signal] = {
    SignalName.helpful: "helpful",
    SignalName.not_helpful: "not_helpful",
    SignalName.wrong: "wrong",
}


def feedback(
    memory_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="a memory id (with --signal)")
    ] = None,
    signal: Annotated[
        SignalName | None,
        typer.Option(help="on the memory ID; wrong also asks for its rewrite"),
    ] = None,
    recall_id: Annotated[
        str | None,
        typer.Option("--recall", help="the recall's id (`pcm recall --json` shows recall_id)"),
    ] = None,
    helpful: Annotated[
        list[str] | None, typer.Option(metavar="ID", help="delivered by the recall, helpful")
    ] = None,
    not_helpful: Annotated[
        list[str] | None, typer.Option(metavar="ID", help="delivered by the recall, not helpful")
    ] = None,
    missed: Annotated[
        list[str] | None, typer.Option(metavar="ID", help="not delivered, but should have been")
    ] = None,
) -> None:
    """Feedback on a recall (--recall with --helpful/--not-helpful/--missed, each
    repeatable) or on one memory (ID --signal, on --recall's query when given); prints what
    changed as JSON. The same feedback again changes nothing."""
    lists = bool(helpful or not_helpful or missed)
    if lists and (memory_id or signal):
        raise typer.BadParameter("give either ID --signal, or --helpful/--not-helpful/--missed")
    if lists:
        if recall_id is None:
            raise typer.BadParameter("--helpful, --not-helpful and --missed need --recall")
        rid = recall_id
        out = call(
            lambda api: api.recall_feedback(
                rid, helpful=helpful or (), not_helpful=not_helpful or (), missed=missed or ()
            )
        )
    elif memory_id is not None and signal is not None:
        mid = memory_id
        value = SIGNALS[signal]
        out = call(lambda api: api.memory_feedback(mid, value, recall_id=recall_id))
    else:
        raise typer.BadParameter(
            "give ID --signal, or --recall with --helpful/--not-helpful/--missed"
        )
    print_json(plain(out))


def register(app: typer.Typer) -> None:
    app.command()(feedback)
