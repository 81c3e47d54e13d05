"""The routine index: which routine each judged memory belongs to, and every routine's entry
times, kept in Redis by the sweeper when it judges a memory (whitepaper §3.8).

Recall's stopped-routine check then costs two Redis round trips and no vector-store scan:
the routines of the recalled memories (read ahead, while recall scores its candidates), and
the latest entry times of each. Without it a recall had to rebuild routines from stored
families (about a thousand payloads read per recall in a 10k-memory tenant).

Per tenant (`keys.routine_*`): a hash of memory id -> routine id; a sorted set per routine,
one member ``"{memory id}|{ts}"`` per event (the memory's creation and each recorded
repeat), scored by the event's time; a key set once the sweeper's `routines` job rebuilt
the index from the stored families (so a Redis that lost its data is rebuilt on the next
tick).

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
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError

from pcm_common.domain.routine_rules import routine_join, routines_to_rank
from pcm_common.stores.redis import Fields, keys

MAX_TRIES = 50  # optimistic retries under contention before giving up on one update


@dataclass(frozen=True)
class Routine:
    id: str
    seed: str  # the first of the asked memories that belongs to it
    entries: list[tuple[str, float]]  # (memory id, event time) up to `now`, oldest first
    later: int = 0  # entries after `now`: the routine went on


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
        (routine,) = await self.record_many(tenant, [(memory_id, times, family)])
        return routine

    async def record_many(
        self,
        tenant: str,
        items: Sequence[tuple[str, Sequence[float], Mapping[str, Sequence[float]]]],
    ) -> list[str | None]:
        """`record` for each (memory id, times, family) of one tenant, applied in order as
        one transaction: the same result as recording them one after the other, in ~3
        round trips for the whole batch instead of ~3 per memory
        (docs/decisions/0045-redis-round-trips-per-batch.md)."""
        if not items:
            return []
        of = keys.routine_of(tenant)
        async with self._locks[tenant], self.redis.pipeline(transaction=True) as pipe:
            for _ in range(MAX_TRIES):
                try:
                    await pipe.watch(of)
                    batch = _BatchPlan(pipe, tenant)
                    ids = list(dict.fromkeys(i for m, _, f in items for i in (m, *f)))
                    found = await pipe.hmget(of, ids)
                    batch.routine_of = {i: _text(r) for i, r in zip(ids, found, strict=True) if r}
                    out = [await batch.place(m, t, f) for m, t, f in items]
                    if not batch.owner:
                        await pipe.unwatch()
                        return out
                    pipe.multi()
                    for r in batch.deleted:
                        pipe.delete(keys.routine_entries(tenant, r))
                    for r, entries in batch.added.items():
                        if entries:
                            pipe.zadd(keys.routine_entries(tenant, r), entries)
                    pipe.hset(of, mapping=batch.owner)
                    await pipe.execute()
                    return out
                except WatchError:
                    continue
        raise RoutineConflict(f"routine index of {tenant} busy")

    async def add_times(self, tenant: str, memory_id: str, times: Iterable[float]) -> bool:
        """Record later events of a memory (repeats merged into it at ingest). False when
        the memory belongs to no routine."""
        of = keys.routine_of(tenant)
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
                    pipe.zadd(keys.routine_entries(tenant, _text(routine)), entries)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue
        raise RoutineConflict(f"routine index of {tenant} busy")

    async def forget(self, tenant: str, memory_id: str) -> None:
        """Remove a deleted memory and its events."""
        of = keys.routine_of(tenant)
        async with self._locks[tenant], self.redis.pipeline(transaction=True) as pipe:
            for _ in range(MAX_TRIES):
                try:
                    await pipe.watch(of)
                    routine = await pipe.hget(of, memory_id)
                    if routine is None:
                        await pipe.unwatch()
                        return
                    key = keys.routine_entries(tenant, _text(routine))
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
        found = await self.redis.hmget(keys.routine_of(tenant), list(memory_ids))
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
            key = keys.routine_entries(tenant, r)
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
        return bool(await self.redis.exists(keys.routine_built(tenant)))

    async def mark_built(self, tenant: str) -> None:
        await self.redis.set(keys.routine_built(tenant), 1)

    async def listed(
        self, tenant: str, now: float, *, limit: int = 100, latest: int = 64
    ) -> list[Routine]:
        """Up to `limit` of the tenant's routines (the inspector's attention view), each
        with its `latest` entries up to `now`; `seed` is its latest entry's memory. One
        SCAN of the tenant's routine keys, then one pipelined round trip."""
        prefix = keys.routine_entries(tenant, "")
        pattern = keys.routine_entries_pattern(tenant)
        ids: list[str] = []
        async for key in self.redis.scan_iter(match=pattern, count=1000):
            routine = _text(key)[len(prefix) :]
            # Routine ids are memory ids (no colon): a colon means the key is another
            # tenant's whose name starts with this one's and ":r:".
            if ":" not in routine:
                ids.append(routine)
            if len(ids) >= limit:
                break
        pipe = self.redis.pipeline(transaction=False)
        for r in ids:
            pipe.zrange(
                keys.routine_entries(tenant, r),
                now,
                "-inf",
                desc=True,
                byscore=True,
                offset=0,
                num=latest,
                withscores=True,
            )
            pipe.zcount(keys.routine_entries(tenant, r), f"({now}", "+inf")
        rows = await pipe.execute() if ids else []
        out: list[Routine] = []
        for i, r in enumerate(ids):
            past, later = rows[2 * i], int(rows[2 * i + 1])
            if past:
                entries = [(_memory_of(m), float(ts)) for m, ts in reversed(past)]
                out.append(Routine(id=r, seed=entries[-1][0], entries=entries, later=later))
        return out

    async def size(self, tenant: str) -> int:
        """Memories placed in a routine (0: the index is empty for this tenant)."""
        return int(await self.redis.hlen(keys.routine_of(tenant)))


class _BatchPlan:
    """What a batch of placements changes, kept locally until the batch is written: each
    placement sees the routines as the placements before it left them. Entry sets are read
    (and watched) only where the rule needs them: a routine merged into another, and the
    sizes of routines competing for a memory."""

    def __init__(self, pipe: Pipeline, tenant: str) -> None:
        self.pipe = pipe
        self.tenant = tenant
        self.routine_of: dict[str, str] = {}  # memory id -> routine, stored and placed here
        self.owner: Fields = {}  # memory id -> routine, to write
        self.added: dict[str, dict[str, float]] = {}  # routine -> entries to add
        self.loaded: dict[str, dict[str, float]] = {}  # routine -> all its entries (read)
        self.deleted: set[str] = set()  # routines merged away (their key is deleted)

    async def _entries(self, routine: str) -> dict[str, float]:
        """Every entry of `routine`: the stored ones (read once, watched) and this
        batch's."""
        known = self.loaded.get(routine)
        if known is None:
            known = {}
            if routine not in self.deleted:
                key = keys.routine_entries(self.tenant, routine)
                await self.pipe.watch(key)  # a repeat added meanwhile is not lost
                rows: list[Any] = await self.pipe.zrange(key, 0, -1, withscores=True)
                known = {_text(m): float(s) for m, s in rows}
            self.loaded[routine] = known
        known.update(self.added.get(routine, {}))
        return known

    async def place(
        self, memory_id: str, times: Sequence[float], family: Mapping[str, Sequence[float]]
    ) -> str | None:
        fam = list(family)
        ranked = routines_to_rank(memory_id, fam, self.routine_of)
        sizes = {r: len(await self._entries(r)) for r in ranked}
        plan = routine_join(memory_id, fam, self.routine_of, sizes)
        if plan.target is None:
            return None
        target = plan.target
        entries = self.added.setdefault(target, {})
        for mid, ts in [(memory_id, times), *((a, family[a]) for a in plan.adopt)]:
            entries.update({_member(mid, t): t for t in ts})
            self._own(mid, target)
        for r in plan.merge:
            for member, score in (await self._entries(r)).items():
                entries[member] = score
                self._own(_memory_of(member), target)
            self.added.pop(r, None)
            self.loaded.pop(r, None)
            self.deleted.add(r)
        if target in self.loaded:
            self.loaded[target].update(entries)
        return target

    def _own(self, memory_id: str, routine: str) -> None:
        self.routine_of[memory_id] = routine
        self.owner[memory_id] = routine
