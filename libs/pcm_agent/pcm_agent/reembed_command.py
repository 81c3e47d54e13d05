"""`pcm reembed --model NAME`: move the store to another embedding model (an operator
key's: PCM_OPERATOR_KEYS or the dev key;
`POST /v1/admin/reembed`), following the job with a progress bar until the store has
switched; `pcm reembed --status` shows the last job. Recall keeps answering meanwhile."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from pcm_agent.cli_support import print_json
from pcm_agent.data_commands import client_call, progress_bar
from pcm_client import PcmClient, ReembedOut, ReembedRunning

POLL_S = 0.5


def _follow(api: PcmClient, job: ReembedOut, quiet: bool) -> ReembedOut:
    """Poll the job until it is done (or stops with an error), with a bar of its copy."""
    with progress_bar(quiet) as bar:
        task = bar.add_task(f"re-embedding with {job.model}", total=job.total or None)
        while job.status in ("running", "switching"):
            if job.error:
                break
            bar.update(task, completed=job.done, total=max(job.total, job.done) or None)
            if job.status == "switching":
                bar.update(task, description="switching")
            time.sleep(POLL_S)
            job = api.reembed_status()
        bar.update(task, completed=job.done, total=max(job.total, job.done) or None)
    return job


def reembed(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="the embedding model to move to")
    ] = None,
    status: Annotated[bool, typer.Option("--status", help="show the last job only")] = False,
    wait: Annotated[bool, typer.Option(help="follow the job until it switches")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Move the vector store to another embedding model: new vectors are built beside the
    old ones, reads switch when they are complete, the old ones are removed. Running it
    again while a job runs follows that job. It moves every tenant's vectors, so it needs an
    operator key (PCM_OPERATOR_KEYS on the server, or the dev key): a tenant's admin key is
    refused (403 operator_only)."""
    if not status and not model:
        raise typer.BadParameter("name the --model to move to, or ask for --status")

    def run(api: PcmClient) -> ReembedOut:
        if status:
            return api.reembed_status()
        try:
            job = api.reembed(model or "")
        except ReembedRunning:
            job = api.reembed_status()
            typer.echo(f"a job to {job.model} is running already; following it", err=True)
        return _follow(api, job, quiet) if wait else job

    out = client_call(run)
    print_json(out.model_dump(mode="json"))
    if out.error and out.status != "done":
        typer.echo(f"pcm: the job stopped: {out.error} (run it again to continue)", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(reembed)
