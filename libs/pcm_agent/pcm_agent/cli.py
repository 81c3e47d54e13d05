"""The `pcm` command of the agent tooling: the client commands, `pcm mcp`, `pcm hook` and
`pcm hooks install`, `pcm wait`, `pcm doctor`, and `pcm governance`.

Installed packages add their own commands through the `pcm.commands` entry point group (a
function given the app): in the repository's workspace `pcm-cli` adds `dev`, `serve` and
`keys` that way, so one `pcm` runs both; alone, this package has only the commands above
and none of the server's dependencies.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

import typer

from pcm_agent import (
    agent_commands,
    data_commands,
    feedback_commands,
    memory_commands,
    reembed_command,
)
from pcm_agent.governance_commands import governance_app

PLUGINS = "pcm.commands"


def build() -> typer.Typer:
    """The agent's commands, without plugins."""
    app = typer.Typer(
        help="PCM (Peripheral Cognitive Mesh): memory for AI agents.", no_args_is_help=True
    )
    memory_commands.register(app)
    feedback_commands.register(app)
    agent_commands.register(app)
    data_commands.register(app)
    reembed_command.register(app)
    app.add_typer(governance_app, name="governance")
    return app


def with_plugins(app: typer.Typer) -> typer.Typer:
    for plugin in entry_points(group=PLUGINS):
        try:
            plugin.load()(app)
        except Exception as exc:  # a broken plugin must not take the hooks down with it
            print(f"pcm: commands of {plugin.value} not loaded: {exc}", file=sys.stderr)
    return app


def main() -> None:
    with_plugins(build())()


if __name__ == "__main__":
    main()
