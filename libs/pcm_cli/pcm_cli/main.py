"""The server's `pcm` commands: `pcm dev` (every service in one process), `pcm serve
<service>` (one per process) and `pcm keys`. They join the agent tooling's commands
(`pcm_agent.cli`: the client commands, `pcm mcp`, the hooks, `wait`, `doctor`) through the
`pcm.commands` entry point, so one `pcm` runs both; `python -m pcm_cli.main` is that whole
command too.

The services are imported only by the commands that run them: a client command, and above
all a hook, which Claude Code starts for every event, loads no more than pcm-client and typer.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from pcm_agent.cli import build
from pcm_cli.keys import keys_app

if TYPE_CHECKING:
    from pcm_common.runtime.config import PcmSettings

# `pcm serve` names (pcm_cli.app.COMPONENTS): the inspector is the browser UI at /ui.
SERVICES = ("ingest", "recall", "graph-extractor", "sweeper", "inspector")


def _serve(names: list[str], host: str, port: int, settings: PcmSettings | None = None) -> None:
    import uvicorn

    from pcm_cli.app import build_app

    # uvicorn handles SIGTERM: it stops accepting, then the app's lifespan drains the broker.
    uvicorn.run(
        build_app(names, settings),
        host=host,
        port=port,
        log_level="warning",
        # Logging is PCM's (`pcm_common.runtime.telemetry`: JSON); access lines are its own.
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=20,
    )


PROFILE_HELP = "starter | local-performance | scale (default: PCM_PROFILE, else none)"


def dev(
    host: str = "127.0.0.1",
    port: int = 8080,
    profile: str = typer.Option("", help=PROFILE_HELP),
) -> None:
    """Every service in one process on the embedded default (Qdrant Edge, local models)."""
    # A development server: the dev key is allowed (`pcm serve` refuses it elsewhere).
    os.environ.setdefault("PCM_ENV", "dev")
    # Read once: the key printed is the one the server is built with.
    s = _settings(profile)
    key = f"dev key: {s.dev_api_key}" if s.dev_key_enabled else "dev key off"
    shown = f", profile {s.profile}" if s.profile else ""
    typer.echo(f"PCM dev: http://{host}:{port}  (docs at /docs, {key}{shown})")
    _serve(list(SERVICES), host, port, s)  # the inspector's UI at /ui included


def serve(
    service: str = typer.Argument(
        ..., help="ingest | recall | graph-extractor | sweeper | inspector"
    ),
    host: str = "0.0.0.0",
    port: int = typer.Option(
        0,
        help="defaults: ingest 8081, recall 8082, graph-extractor 8083, sweeper 8084, "
        "inspector 8085",
    ),
    profile: str = typer.Option("", help=PROFILE_HELP),
) -> None:
    """One service per process (production). `inspector` is the browser UI at /ui alone;
    its routes are served by ingest."""
    from pcm_cli.app import DEFAULT_PORTS

    if service not in SERVICES:
        raise typer.BadParameter(f"unknown service {service!r}; one of {', '.join(SERVICES)}")
    s = _settings(profile)
    refusal = dev_key_refusal(s)
    if refusal:
        typer.echo(refusal, err=True)
        raise typer.Exit(2)
    _serve([service], host, port or DEFAULT_PORTS[service], s)


def _settings(profile: str) -> PcmSettings:
    """The process's settings, or exit 2 with what is wrong in them (an unknown profile,
    `scale` without its servers, a malformed value) rather than a traceback."""
    from pydantic import ValidationError

    from pcm_common.runtime.config import PcmSettings

    if profile:
        # Through the environment: each service builds its own settings class from it.
        os.environ["PCM_PROFILE"] = profile
    try:
        return PcmSettings()
    except ValidationError as exc:
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            typer.echo(f"pcm: invalid settings: {where + ': ' if where else ''}{msg}", err=True)
        raise typer.Exit(2) from None


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


def register(app: typer.Typer) -> None:
    """Add the server's commands to `app` (the `pcm.commands` entry point)."""
    app.command()(dev)
    app.command()(serve)
    app.add_typer(keys_app, name="keys")


app = build()
register(app)


if __name__ == "__main__":
    app()
