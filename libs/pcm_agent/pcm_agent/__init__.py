"""PCM's agent tooling, installable without the server: the `pcm` client commands, the MCP
server (`pcm mcp`) and the Claude Code hooks (`pcm hook`, `pcm hooks install`), all
clients of PCM's HTTP API through `pcm-client`."""
