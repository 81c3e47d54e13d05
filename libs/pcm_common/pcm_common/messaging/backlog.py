"""What each consumer group still has to process, counted from the stream's entries.

One place for `/v1/pipeline`, `pcm wait` and the `pcm_stream_pending` metric that drives the
autoscalers. Redis's own `lag` (XINFO GROUPS) is entries-added minus the group's
entries-read, and entries-read is not always kept: after a Redis restart (AOF replay) it
came back null, and a null lag summed as the stream's length counted every processed but
not yet trimmed entry as unread (issue 33: `pending: 3414` for good). So the group's
last-delivered id is compared with the stream's own ids instead:

- last-delivered at or past the last generated id: nothing unread;
- the first entry still in the stream is after last-delivered: all of it is unread;
- otherwise Redis's lag when it is plausible (0 < lag < length: at least the first entry
  was delivered), else the entries after last-delivered, counted with XRANGE.

Plus the group's pending entries (delivered, not acknowledged: the PEL count).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from pcm_common.messaging.events import PIPELINE_GROUPS
from pcm_common.runtime.telemetry import STREAM_LAG

# Entries per XRANGE page when Redis's lag cannot be used (rare: it costs their bodies).
COUNT_PAGE = 1000

StreamId = tuple[int, int]


def parse_id(raw: Any) -> StreamId:
    """`b"1700000000000-3"` as a comparable (ms, seq) pair."""
    ms, _, seq = _s(raw).partition("-")
    return int(ms), int(seq or 0)


def unread_bound(stream_info: Mapping[str, Any], last_delivered: StreamId, lag: Any) -> int | None:
    """Entries of the stream after `last_delivered` when the XINFO answers decide it; None
    when they must be counted (`count_after`)."""
    length = int(stream_info.get("length") or 0)
    if length == 0 or last_delivered >= parse_id(stream_info["last-generated-id"]):
        return 0
    first = stream_info.get("first-entry")
    if not first or parse_id(first[0]) > last_delivered:
        return length
    if lag is not None and 0 < int(lag) < length:
        return int(lag)
    return None


async def count_after(redis: Redis, stream: str, last_delivered: StreamId) -> int:
    """Entries with an id after `last_delivered`, page by page (XRANGE, exclusive start)."""
    start = f"({last_delivered[0]}-{last_delivered[1]}"
    total = 0
    while True:
        page: list[Any] = await redis.xrange(stream, min=start, max="+", count=COUNT_PAGE) or []
        total += len(page)
        if len(page) < COUNT_PAGE:
            return total
        start = f"({_s(page[-1][0])}"


async def group_backlog(
    redis: Redis, stream: str, stream_info: Mapping[str, Any] | None, info: Mapping[str, Any] | None
) -> tuple[int, int]:
    """(unread, pending) of one group; a group not created yet reads from the start."""
    if stream_info is None:
        return 0, 0
    if info is None:
        return int(stream_info.get("length") or 0), 0
    pending = int(info.get("pending") or 0)
    delivered = parse_id(info.get("last-delivered-id") or "0-0")
    unread = unread_bound(stream_info, delivered, info.get("lag"))
    if unread is None:
        unread = await count_after(redis, stream, delivered)
    return unread, pending


async def pipeline_status(redis: Redis) -> dict[str, Any]:
    """Entries written but not yet processed by every pipeline group (unread + pending),
    and the `pcm_stream_pending` gauge set to the same numbers.

    One pipelined round trip for every stream's XINFO: benchmarks and `pcm wait` poll this
    every few milliseconds while the pipeline works."""
    streams_of = list(PIPELINE_GROUPS)
    async with redis.pipeline(transaction=False) as pipe:
        for stream in streams_of:
            pipe.xinfo_stream(stream)
            pipe.xinfo_groups(stream)
        replies = await pipe.execute(raise_on_error=False)
    total = 0
    streams: dict[str, Any] = {}
    for n, stream in enumerate(streams_of):
        stream_info = _answer(replies[2 * n])
        groups = {_s(i["name"]): i for i in _answer(replies[2 * n + 1]) or []}
        per_group: dict[str, Any] = {}
        for group in PIPELINE_GROUPS[stream]:
            lag, pending = await group_backlog(redis, stream, stream_info, groups.get(group))
            per_group[group] = {"lag": lag, "pending": pending}
            STREAM_LAG.labels(stream, group).set(lag + pending)
            total += lag + pending
        length = int(stream_info.get("length") or 0) if stream_info else 0
        streams[stream] = {"length": length, "groups": per_group}
    return {"pending": total, "streams": streams}


def group_backlogs(status: Mapping[str, Any]) -> dict[str, int]:
    """Entries each consumer group still has to process (lag + pending), from a
    `pipeline_status` answer (or its JSON, `/v1/pipeline`)."""
    out: dict[str, int] = {}
    for stream in (status.get("streams") or {}).values():
        for group, counts in (stream.get("groups") or {}).items():
            out[group] = out.get(group, 0) + int(counts.get("lag") or 0)
            out[group] += int(counts.get("pending") or 0)
    return out


def _answer(reply: Any) -> Any:
    # A stream not created yet answers XINFO with an error (None here); anything else is real.
    if isinstance(reply, ResponseError):
        return None
    if isinstance(reply, Exception):
        raise reply
    return reply


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)
