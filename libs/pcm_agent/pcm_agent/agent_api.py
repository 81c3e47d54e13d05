"""What the `pcm` client commands, the MCP server and the hooks ask of PCM beyond single
calls of `pcm_client`, so the three answer alike: answers as plain JSON, a memory with
its history, the counts with the backlog."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pcm_client import AsyncPcmClient, PcmClient, PcmError, TransportError


def plain(answer: BaseModel) -> dict[str, Any]:
    """An answer as the server sent it: the fields it sent (and those the client does not
    know), none added from the model's defaults."""
    return answer.model_dump(mode="json", exclude_unset=True)


async def inspect(api: AsyncPcmClient, memory_id: str) -> dict[str, Any]:
    """The memory whole, with its version history under `history`."""
    memory = plain(await api.get(memory_id))
    return memory | {"history": plain(await api.history(memory_id))}


async def stats(api: AsyncPcmClient) -> dict[str, Any]:
    """Exact counts (`GET /v1/stats`: memories by state, pinned, episode records) and the
    pipeline backlog."""
    counts = await api.stats()
    return counts | {"pending": (await api.pipeline())["pending"]}


def key_refusal(pcm: PcmClient) -> str | None:
    """Why `pcm`'s server and key would not serve an agent (a line to print), or None when
    the server answers and accepts the key: a call every key's role may make, reading
    nothing but counts."""
    try:
        pcm.stats()
    except TransportError as exc:
        return str(exc)
    except PcmError as exc:
        return f"{exc} (PCM_API_KEY at {pcm.url})"
    return None
