"""`pcm`: run the services, check a deployment, wait for the pipeline."""

from __future__ import annotations

import os
import time

# litellm looks up its model cost map on the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import typer
import uvicorn

from pcm_cli.app import COMPONENTS, DEFAULT_PORTS, build_app

app = typer.Typer(
    help="PCM (Peripheral Cognitive Mesh): memory for AI agents.", no_args_is_help=True
)


def _serve(names: list[str], host: str, port: int) -> None:
    # uvicorn handles SIGTERM: it stops accepting, then the app's lifespan drains the broker.
    uvicorn.run(
        build_app(names), host=host, port=port, log_level="warning", timeout_graceful_shutdown=20
    )


@app.command()
def dev(host: str = "127.0.0.1", port: int = 8080) -> None:
    """Every service in one process on the embedded default (Qdrant Edge, local models)."""
    typer.echo(f"PCM dev: http://{host}:{port}  (docs at /docs, dev key: pcm-dev-key)")
    _serve(list(COMPONENTS), host, port)


@app.command()
def serve(
    service: str = typer.Argument(..., help="ingest | recall | graph-extractor | sweeper"),
    host: str = "0.0.0.0",
    port: int = typer.Option(
        0, help="defaults: ingest 8081, recall 8082, graph-extractor 8083, sweeper 8084"
    ),
) -> None:
    """One service per process (production)."""
    if service not in COMPONENTS:
        raise typer.BadParameter(f"unknown service {service!r}; one of {', '.join(COMPONENTS)}")
    _serve([service], host, port or DEFAULT_PORTS[service])


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
    url: str = "http://127.0.0.1:8080",
    timeout: float = typer.Option(120.0, help="seconds"),
) -> None:
    """Wait until the service is ready and the background pipeline has caught up."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            ready = httpx.get(f"{url}/readyz", timeout=5).status_code == 200
            pending = httpx.get(f"{url}/v1/pipeline", timeout=5).json()["pending"]
            if ready and pending == 0:
                typer.echo("ready; pipeline settled")
                return
            last = f"ready={ready} pending={pending}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(0.5)
    typer.echo(f"timed out: {last}", err=True)
    raise typer.Exit(1)


@app.command()
def doctor(url: str = "http://127.0.0.1:8080") -> None:
    """Print readiness of every dependency and the pipeline backlog."""
    try:
        typer.echo(httpx.get(f"{url}/readyz", timeout=10).text)
        typer.echo(httpx.get(f"{url}/v1/pipeline", timeout=10).text)
    except httpx.HTTPError as exc:
        typer.echo(f"cannot reach {url}: {exc!r}", err=True)
        raise typer.Exit(1) from None


if __name__ == "__main__":
    app()
