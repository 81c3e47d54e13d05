"""The routine index: which routine each judged memory belongs to, and every routine's entry
times, kept in Redis by the sweeper when it judges a memory (whitepaper §3.8).

Recall's stopped-routine check then costs two Redis round trips and no vector-store scan:
the routines of the recalled memories (read ahead, while recall scores its candidates), and
the latest entry times of each. Without it a recall had to rebuild routines from stored
families (about a thousand payloads read per recall in a 10k-memory tenant).

Per tenant:
- ``pcm:routine:{tenant}:of``: hash, memory id -> routine id;
- ``pcm:routine:{tenant}:r:{routine}``: sorted set, one member ``"{memory id}|{ts}"`` per
  event (the memory's creation and each recorded repeat), scored by the event's time;
- ``pcm:routine:{tenant}:built``: set once the sweeper's `routines` job rebuilt the index
  from the stored families (so a Redis that lost its data is rebuilt on the next tick).

Every change runs under WATCH on the tenant's hash and retries on conflict, so judging
workers and sweeper replicas can update one tenant concurrently; each operation is
idempotent (judging a memory again, replaying an event, writes the same state).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import WatchError

from pcm_common.domain.surprisal import routine_join, routines_to_rank

MAX_TRIES = 50  # optimistic retries under contention before giving up on one update


@dataclass(frozen=True)
class Routine:
    id: str
    seed: str  # the first of the asked memories that belongs to it
    entries: list[tuple[str, float]]  # (memory id, event time) up to `now`, oldest first
    later: int = 0  # entries after `now`: the routine went on


def _of_key(tenant: str) -> str:
    return f"pcm:routine:{tenant}:of"


def _entries_key(tenant: str, routine: str) -> str:
    return f"pcm:routine:{tenant}:r:{routine}"


def _built_key(tenant: str) -> str:
    return f"pcm:routine:{tenant}:built"


def _member(memory_id: str, ts: float) -> str:
    return f"{memory_id}|{ts:.3f}"


def _memory_of(member: bytes | str) -> str:
    text = member.decode() if isinstance(member, bytes) else member
    return text.split("|", 1)[0]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RoutineConflict(RuntimeError):
    """Too many concurrent writers on one tenant; the caller retries later."""


class RoutineIndex:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        # Writers of one tenant in this process take turns: WATCH then only has to settle
        # conflicts between processes, and a batch of judgments does not retry in a storm.
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def record(
        self,
        tenant: str,
        memory_id: str,
        times: Sequence[float],
        family: Mapping[str, Sequence[float]],
    ) -> str | None:
        """Place a judged memory (its event `times`) in its routine, given its family
        (member id -> that member's event times, nearest first). Returns the routine id,
        or None when it belongs to none."""
        of = _of_key(tenant)
        async with self._locks[tenant], self.redis.pipeline(transaction=True) as pipe:
            for _ in range(MAX_TRIES):
                try:
                    await pipe.watch(of)
                    ids = [memory_id, *family]
                    found = await pipe.hmget(of, ids)
                    routine_of = {i: _text(r) for i, r in zip(ids, found, strict=True) if r}
                    # Sizes only where the rule ranks routines (rarely): one round trip
                    # per routine the family touched was most of this update's cost.
                    sizes = {
                        r: int(await pipe.zcard(_entries_key(tenant, r)))
                        for r in routines_to_rank(memory_id, list(family), routine_of)
                    }
                    plan = routine_join(memory_id, list(family), routine_of, sizes)
                    if plan.target is None:
                        await pipe.unwatch()
                        return None
                    target = plan.target
                    entries: dict[str, float] = {}
                    owner: dict[Any, Any] = {}  # memory id -> routine (redis-py's Mapping)
                    for mid, ts in [(memory_id, times), *((a, family[a]) for a in plan.adopt)]:
                        entries.update({_member(mid, t): t for t in ts})
                        owner[mid] = target
                    for r in plan.merge:
                        key = _entries_key(tenant, r)
                        await pipe.watch(key)  # a repeat added meanwhile is not lost
                        rows: list[Any] = await pipe.zrange(key, 0, -1, withscores=True)
                        for member, score in rows:
                            entries[_text(member)] = float(score)
                            owner[_memory_of(member)] = target
                    pipe.multi()
                    for r in plan.merge:
                        pipe.delete(_entries_key(tenant, r))
                    if entries:
                        pipe.zadd(_entries_key(tenant, target), entries)
                    pipe.hset(of, mapping=owner)
                    await pipe.execute()
                    return target
                except WatchError:
                    continue
        raise RoutineConflict(f"routine index of {tenant} busy")

    async def add_times(self, tenant: str, memory_id: str, times: Iterable[float]) -> bool:
        """Record later events of a memory (repeats merged into it at ingest). False when
        the memory belongs to no routine."""
        of = _of_key(tenant)
        entries = {_member(memory_id, t): t for t in times}
        async with self._locks[tenant], self.redis.pipeline(transaction=True) as pipe:
            for _ in range(MAX_TRIES):
                try:
                    await pipe.watch(of)
                    routine = await pipe.hget(of, memory_id)
                    if routine is None or not entries:
                        await pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.zadd(_entries_key(tenant, _text(routine)), entries)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue
        raise RoutineConflict(f"routine index of {tenant} busy")

    async def forget(self, tenant: str, memory_id: str) -> None:
        """Remove a deleted memory and its events."""
        of = _of_key(tenant)
        async with self._locks[tenant], self.redis.pipeline(transaction=True) as pipe:
            for _ in range(MAX_TRIES):
                try:
                    await pipe.watch(of)
                    routine = await pipe.hget(of, memory_id)
                    if routine is None:
                        await pipe.unwatch()
                        return
                    key = _entries_key(tenant, _text(routine))
                    await pipe.watch(key)
                    prefix = f"{memory_id}|"
                    members: list[Any] = await pipe.zrange(key, 0, -1)
                    gone = [m for m in members if _text(m).startswith(prefix)]
                    pipe.multi()
                    if gone:
                        pipe.zrem(key, *gone)
                    pipe.hdel(of, memory_id)
                    await pipe.execute()
                    return
                except WatchError:
                    continue
        raise RoutineConflict(f"routine index of {tenant} busy")

    async def routine_of(self, tenant: str, memory_ids: Sequence[str]) -> dict[str, str | None]:
        """Each of `memory_ids` -> the id of its routine, or None when it belongs to none.
        One round trip."""
        if not memory_ids:
            return {}
        found = await self.redis.hmget(_of_key(tenant), list(memory_ids))
        return {
            mid: _text(r) if r is not None else None
            for mid, r in zip(memory_ids, found, strict=True)
        }

    async def routines(
        self,
        tenant: str,
        memory_ids: Sequence[str],
        now: float,
        *,
        latest: int = 64,
        known: Mapping[str, str | None] | None = None,
    ) -> list[Routine]:
        """The routines of `memory_ids`, in the order of their first member among them,
        each with its `latest` entries up to `now` (oldest first) and how many come after.
        `known`: memberships read before (`routine_of`); only the ids it lacks are asked.
        Two round trips, one when `known` covers `memory_ids`."""
        if not memory_ids:
            return []
        routine_of = dict(known or {})
        missing = [m for m in dict.fromkeys(memory_ids) if m not in routine_of]
        routine_of.update(await self.routine_of(tenant, missing))
        seeds: dict[str, str] = {}
        for mid in memory_ids:
            r = routine_of[mid]
            if r is not None:
                seeds.setdefault(r, mid)
        if not seeds:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for r in seeds:
            key = _entries_key(tenant, r)
            pipe.zrange(
                key, now, "-inf", desc=True, byscore=True, offset=0, num=latest, withscores=True
            )
            pipe.zcount(key, f"({now}", "+inf")
        rows = await pipe.execute()
        out: list[Routine] = []
        for i, (r, seed) in enumerate(seeds.items()):
            past, later = rows[2 * i], int(rows[2 * i + 1])
            if past or later:
                entries = [(_memory_of(m), float(ts)) for m, ts in reversed(past)]
                out.append(Routine(id=r, seed=seed, entries=entries, later=later))
        return out

    async def built(self, tenant: str) -> bool:
        """Whether the index was rebuilt from the stored families since Redis last lost its
        data (the marker goes with the data)."""
        return bool(await self.redis.exists(_built_key(tenant)))

    async def mark_built(self, tenant: str) -> None:
        await self.redis.set(_built_key(tenant), 1)

    async def size(self, tenant: str) -> int:
        """Memories placed in a routine (0: the index is empty for this tenant)."""
        return int(await self.redis.hlen(_of_key(tenant)))
