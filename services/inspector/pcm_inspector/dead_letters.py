"""The tenant's dead letters: pipeline events that failed every delivery and were set aside
in `pcm.dlq` (`pcm_common.messaging.bus`). The stream holds every tenant's; only the caller's are
answered, read from the newest back over a bounded window."""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from pcm_common.messaging.events import STREAM_DLQ

# Entries read per call, newest first: the stream is trimmed by age, and a page that reads
# more than this to fill up is cut short (`scanned` says how far it looked).
WINDOW = 2000


async def dead_letters(redis: Redis, tenant: str, limit: int) -> dict[str, Any]:
    rows = await redis.xrevrange(STREAM_DLQ, "+", "-", count=WINDOW) or []
    items: list[dict[str, Any]] = []
    for entry_id, fields in rows:
        raw = (fields or {}).get(b"data") or (fields or {}).get("data")
        try:
            letter = json.loads(raw or "")
        except ValueError:
            continue  # not one of PCM's letters
        body = letter.get("body") if isinstance(letter, dict) else None
        if not isinstance(body, dict):
            continue
        if body.get("tenant") != tenant:
            continue
        items.append(
            {
                "id": entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
                "stream": letter.get("stream"),
                "group": letter.get("group"),
                "error": letter.get("error"),
                "deliveries": letter.get("deliveries"),
                "failed_at": letter.get("failed_at"),
                "memory_id": body.get("memory_id"),
                "body": body,
            }
        )
        if len(items) >= limit:
            break
    return {"items": items, "scanned": len(rows)}
