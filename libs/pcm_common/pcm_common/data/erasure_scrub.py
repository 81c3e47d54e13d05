"""What an erasure removes besides the points and the graph facts (`pcm_common.data.erasure`):
the stream entries that name an erased memory (or the erased asker), and the Redis keys
that hold an erased memory's id or its owner's episode stream.

Each step reads the current state and removes what matches, so running it again removes
nothing more: an erasure job that stopped halfway is finished by running it again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from pcm_common.messaging.events import PIPELINE_GROUPS, STREAM_DLQ
from pcm_common.messaging.stream_batches import decode_entry
from pcm_common.stores.redis import feedback, keys

# Entries read per XRANGE call while looking for the erased ones.
_PAGE = 500
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Asker:
    """Who an erasure is of, as a recall event names its asker (`MemoryRecalled`): an
    event whose asker is the erased user (or names the erased workspace or project) goes
    too, though it carries no text, since it says what that user asked about."""

    user_id: str | None = None
    workspace: str | None = None
    project: str | None = None

    def asked(self, body: dict[str, Any]) -> bool:
        given = {k: v for k, v in vars(self).items() if v is not None}
        return bool(given) and all(body.get(k) == v for k, v in given.items())


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def names_erased(body: dict[str, Any], ids: Collection[str], asker: Asker) -> bool:
    """Whether an event body is of an erased memory: its `memory_id`, a recalled item, or
    (a recall event) the erased asker."""
    if str(body.get("memory_id", "")) in ids:
        return True
    items = body.get("items")
    if isinstance(items, list) and any(
        isinstance(i, dict) and str(i.get("memory_id", "")) in ids for i in items
    ):
        return True
    return body.get("type") == "memory.recalled" and asker.asked(body)


def _dead_letter_body(fields: dict[bytes, bytes]) -> dict[str, Any]:
    """The failed event inside a dead letter (`Bus._dead_letter` writes it as JSON)."""
    try:
        letter = json.loads(fields.get(b"data", b"{}"))
    except ValueError:
        return {}
    body = letter.get("body") if isinstance(letter, dict) else None
    return body if isinstance(body, dict) else {}


async def _matching_entries(
    redis: Redis, stream: str, keep: Callable[[dict[bytes, bytes]], bool]
) -> list[bytes]:
    """Ids of the entries of `stream` that `keep` selects, read `_PAGE` at a time."""
    out: list[bytes] = []
    start = "-"
    while True:
        page = cast(
            list[tuple[bytes, dict[bytes, bytes]]],
            await redis.xrange(stream, min=start, max="+", count=_PAGE),
        )
        if not page:
            return out
        out += [entry_id for entry_id, fields in page if keep(fields)]
        if len(page) < _PAGE:
            return out
        start = f"({_s(page[-1][0])}"


async def scrub_streams(redis: Redis, ids: Collection[str], asker: Asker) -> int:
    """Delete the entries that name an erased memory from every pipeline stream and the
    dead letters; returns how many. Each is acknowledged for every group first, so no
    pending list keeps an entry that no longer exists, and its failure count goes too."""
    removed = 0
    streams: dict[str, Sequence[str]] = {**PIPELINE_GROUPS, STREAM_DLQ: ()}
    for stream, groups in streams.items():
        if stream == STREAM_DLQ:
            gone = await _matching_entries(
                redis, stream, lambda f: names_erased(_dead_letter_body(f), ids, asker)
            )
        else:
            gone = await _matching_entries(
                redis, stream, lambda f: names_erased(decode_entry(f), ids, asker)
            )
        if not gone:
            continue
        async with redis.pipeline(transaction=False) as pipe:
            for group in groups:
                pipe.xack(stream, group, *gone)
                pipe.hdel(keys.stream_failures(stream, group), *gone)
            pipe.xdel(stream, *gone)
            try:
                await pipe.execute()
            except ResponseError:  # a group not created yet: delete alone
                await redis.xdel(stream, *gone)
        removed += len(gone)
    return removed


async def scrub_keys(
    redis: Redis,
    tenant: str,
    ids: Collection[str],
    episode_keys: Iterable[str],
    asker: Asker | None = None,
) -> int:
    """Delete the Redis keys and members that hold an erased memory: its outbox notes, the
    repair jobs' per-memory markers, its reconsolidation keys (`keys.labile`), the
    sweeper's applied-recall markers, the stored answers of writes that stored it
    (`Idempotency-Key`), the erased owners' current-episode keys, and the retrieval
    feedback of the erased asker or naming an erased memory
    (`stores.redis.feedback.scrub`). Returns how many."""
    removed = 0
    if ids:
        async with redis.pipeline(transaction=False) as pipe:
            for memory_id in ids:
                pipe.zrem(keys.OUTBOX_WRITTEN, json.dumps([tenant, memory_id]))
                pipe.delete(
                    keys.graph_republished(tenant, memory_id),
                    keys.judge_republished(tenant, memory_id),
                )
                # (One hash tag: one slot, one DEL.)
                pipe.delete(keys.labile(tenant, memory_id), keys.labile_cooldown(tenant, memory_id))
            removed += sum(int(n) for n in await pipe.execute())
    removed += await _scrub_owed_changes(redis, tenant, ids)
    removed += await _scrub_answers(redis, tenant, ids)
    removed += await _scrub_markers(redis, ids)
    removed += await feedback.scrub(redis, tenant, ids, (asker or Asker()).asked)
    owners = sorted(set(episode_keys))
    if owners:
        removed += int(await redis.delete(*owners))
    return removed


async def _scrub_owed_changes(redis: Redis, tenant: str, ids: Collection[str]) -> int:
    """Owed change events (`outbox.owe`) of erased memories: the memories are gone, so
    nothing is owed any more."""
    gone: list[bytes] = []
    async for member, _ in redis.zscan_iter(keys.OUTBOX_CHANGED, count=500):
        try:
            event = json.loads(member)
        except ValueError:
            continue
        if event.get("tenant") == tenant and event.get("memory_id") in ids:
            gone.append(member)
    if gone:
        await redis.zrem(keys.OUTBOX_CHANGED, *gone)
    return len(gone)


async def _scrub_answers(redis: Redis, tenant: str, ids: Collection[str]) -> int:
    """Stored write answers (`pcm_ingest.idempotency`, `keys.idempotency`) that name an
    erased memory's id."""
    gone: list[bytes] = []
    async for name in redis.scan_iter(match=keys.idempotency_pattern(tenant), count=500):
        raw = await redis.get(name)
        if raw is not None and any(m in ids for m in _UUID.findall(_s(raw))):
            gone.append(name)
    if gone:
        await redis.delete(*gone)
    return len(gone)


async def _scrub_markers(redis: Redis, ids: Collection[str]) -> int:
    """The sweeper's markers of the recall effects applied (`keys.applied`, memory id ->
    what was applied, kept a week): the erased memories' fields. Not kept per
    tenant, but memory ids are unique, so only erased memories' fields match."""
    if not ids:
        return 0
    removed = 0
    wanted = list(ids)
    async for name in redis.scan_iter(match=keys.APPLIED_PATTERN, count=1000):
        async with redis.pipeline(transaction=False) as pipe:
            for i in range(0, len(wanted), 1000):
                pipe.hdel(name, *wanted[i : i + 1000])
            removed += sum(int(n) for n in await pipe.execute())
    return removed
