"""The tenant's dead letters: pipeline events that failed every delivery and were set aside
in `pcm.dlq` (`pcm_common.messaging.bus`). The stream holds every tenant's; only the caller's are
answered, read from the newest back over a bounded window, and only the caller's can be
sent back to the stream they failed on (`retry`)."""

from __future__ import annotations

import json
import re
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import WatchError

from pcm_common.messaging.bus import Bus
from pcm_common.messaging.events import PIPELINE_GROUPS, STREAM_DLQ
from pcm_common.runtime.telemetry import get_logger

log = get_logger("dead_letters")

# Entries read per call, newest first: the stream is trimmed by age, and a page that reads
# more than this to fill up is cut short (`scanned` says how far it looked).
WINDOW = 2000
# A stream entry id (milliseconds-sequence, each below 2**64), the only form a letter's id
# takes; anything else would be an error from Redis, not "no such letter".
LETTER_ID = re.compile(r"(\d{1,20})-(\d{1,20})")
ID_PART_MAX = 2**64 - 1
# Tries of the retry's transaction when `pcm.dlq` changed under it (a letter arriving from
# another event's failure between the read and the write aborts it; it is then read again).
RETRY_TRIES = 10


class DeadLetterBusy(RuntimeError):
    """`pcm.dlq` changed under every try of a retry (letters arriving without pause)."""


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _letter(entry_id: Any, fields: Any) -> dict[str, Any] | None:
    """One of PCM's letters as the API shows it, or None for an entry that is not one."""
    raw = (fields or {}).get(b"data") or (fields or {}).get("data")
    try:
        letter = json.loads(raw or "")
    except ValueError:
        return None
    body = letter.get("body") if isinstance(letter, dict) else None
    if not isinstance(body, dict):
        return None
    return {
        "id": _text(entry_id),
        "stream": letter.get("stream"),
        "group": letter.get("group"),
        "error": letter.get("error"),
        "deliveries": letter.get("deliveries"),
        "failed_at": letter.get("failed_at"),
        "memory_id": body.get("memory_id"),
        "body": body,
    }


async def dead_letters(redis: Redis, tenant: str, limit: int) -> dict[str, Any]:
    rows = await redis.xrevrange(STREAM_DLQ, "+", "-", count=WINDOW) or []
    items: list[dict[str, Any]] = []
    for entry_id, fields in rows:
        letter = _letter(entry_id, fields)
        if letter is None or letter["body"].get("tenant") != tenant:
            continue
        items.append(letter)
        if len(items) >= limit:
            break
    return {"items": items, "scanned": len(rows)}


async def retry(redis: Redis, bus: Bus, tenant: str, letter_id: str) -> dict[str, Any] | None:
    """Send the tenant's dead letter `letter_id` back to the stream it failed on and remove
    it from `pcm.dlq`, both in one transaction (MULTI under WATCH of `pcm.dlq`): the event
    is published once, however often this is called; a second call finds no letter. None:
    no such letter of this tenant (never was, another tenant's, trimmed, retried already).

    The event goes back as it was (its `event_id` too), so every consumer group of the
    stream sees it again: the handlers are idempotent (delivery is at-least-once), and those
    that keep an applied-marker per event skip what they already did."""
    parts = LETTER_ID.fullmatch(letter_id)
    if parts is None or any(int(n) > ID_PART_MAX for n in parts.groups()):
        return None
    for _ in range(RETRY_TRIES):
        async with redis.pipeline(transaction=True) as pipe:
            await pipe.watch(STREAM_DLQ)
            rows = await pipe.xrange(STREAM_DLQ, letter_id, letter_id)
            letter = _letter(*rows[0]) if rows else None
            if (
                letter is None
                or letter["body"].get("tenant") != tenant
                or letter["stream"] not in PIPELINE_GROUPS
            ):
                return None
            pipe.multi()
            sent = await bus.queue_publish(pipe, letter["stream"], letter["body"])
            pipe.xdel(STREAM_DLQ, letter_id)
            try:
                done = await pipe.execute()
            except WatchError:
                continue
            published = done[0] if sent is None else sent
        log.info(
            "dead_letter_retried",
            tenant=tenant,
            letter_id=letter_id,
            stream=letter["stream"],
            group=letter["group"],
            memory_id=letter["memory_id"],
            request_id=letter["body"].get("request_id"),
        )
        return {
            "id": letter_id,
            "stream": letter["stream"],
            "group": letter["group"],
            "memory_id": letter["memory_id"],
            "published_id": _text(published),
        }
    raise DeadLetterBusy(f"pcm.dlq changed under {RETRY_TRIES} tries")
