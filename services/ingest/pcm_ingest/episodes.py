"""Episodes for writes that name none (whitepaper §2.3, §2.5: the same episode is what was
saved within 60 minutes).

Each stream of memories (tenant, user, scope, workspace, project) has a current episode in
Redis: its id and the span of `created_at` it covers. A memory within `gap` of that span
joins it and widens it; any other memory opens a new episode, which becomes the stream's
current one. So a conversation imported in time order splits where it paused for more
than an hour, as a live one does. One Lua script per memory makes the read-and-update
atomic across ingest replicas; a batch sends all of its memories in one pipeline, oldest
first.

Without these ids a memory would get no episode context in recall, no episode mates in
spreading activation and no consolidation: all three go by `episode`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from redis.asyncio import Redis

from pcm_common.domain.memory import MemoryRecord
from pcm_common.stores.redis import keys as redis_keys
from pcm_common.stores.redis.connect import is_cluster
from pcm_common.stores.redis.scripts import EPISODE_JOIN_OR_OPEN

AUTO_PREFIX = "auto-"
# A stream idle this long forgets its current episode (a later memory opens a new one,
# which the gap rule would do anyway unless it is backfilled next to an old one).
STREAM_TTL_S = 7 * 86400


def stream_key(record: MemoryRecord) -> str:
    """The Redis key of the record's stream (`keys.episode_stream`)."""
    return redis_keys.episode_stream(
        record.tenant, record.scope.value, record.workspace, record.project, record.user_id
    )


class EpisodeAssigner:
    def __init__(self, redis: Redis, gap_s: float) -> None:
        self.redis = redis
        self.gap_s = gap_s
        self._script = redis.register_script(EPISODE_JOIN_OR_OPEN)
        self._cluster = is_cluster(redis)

    async def assign(self, records: Sequence[MemoryRecord]) -> None:
        """Set `episode` on each record that has none (in place)."""
        todo = sorted((r for r in records if not r.episode), key=lambda r: (r.created_at, r.seq))
        if not todo:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for r in todo:
                args: list[str | float] = [
                    r.created_at.timestamp(),
                    self.gap_s,
                    f"{AUTO_PREFIX}{uuid.uuid4().hex[:16]}",
                    STREAM_TTL_S,
                ]
                if self._cluster:
                    # A cluster pipeline does not load a script its EVALSHA misses (the
                    # single-server pipeline does): send the body, which Redis caches.
                    pipe.eval(EPISODE_JOIN_OR_OPEN, 1, stream_key(r), *args)
                else:
                    await self._script(keys=[stream_key(r)], args=args, client=pipe)
            ids = await pipe.execute()
        for r, episode in zip(todo, ids, strict=True):
            r.episode = episode.decode() if isinstance(episode, bytes) else str(episode)
