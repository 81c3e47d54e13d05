"""Carries out a write request's decisions (`plan.plan_writes`) on the stores, in the order
that keeps a batch equal to its items written one at a time: stored copies reinforced,
then new memories (or merges into a stored twin) in request order, stored in one upsert
and announced, then repeats of the request's own new memories.

Every event is owed in the outbox before its store change and paid after it
(`pcm_common.messaging.outbox`): a publish that fails leaves events owed, not changes undone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pcm_common.domain.memory import MemoryRecord
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.messaging.outbox import cross_out, note, owe, pay
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import MEMORIES_WRITTEN, get_logger
from pcm_common.stores.vectors import ScoredPoint, SparseVec, VectorPoint
from pcm_ingest.episodes import EpisodeAssigner
from pcm_ingest.plan import WriteDecision
from pcm_ingest.schemas import StoreResult

log = get_logger("ingest")


@dataclass(frozen=True)
class NewMemory:
    """A memory an item would be stored as, with its vectors."""

    record: MemoryRecord
    vector: list[float]
    sparse: SparseVec


@dataclass(frozen=True)
class WriteBatch:
    """A planned request: its decisions and what carrying them out needs."""

    tenant: str
    decisions: Sequence[WriteDecision]
    # The stored copies found by text hash, by id (a first reinforcement uses this read).
    stored: Mapping[str, ScoredPoint]
    # The memory each item that may be created would become (created ones, and merges
    # into a stored twin, which are created when the twin was deleted meanwhile).
    new: Mapping[int, NewMemory]
    at: Sequence[datetime]  # each item's time as a repeat: its created_at, else now
    redacted: frozenset[int] = frozenset()
    once: bool = False  # a replay: repeats the first try recorded are not added again


@dataclass
class _Outcome:
    results: dict[int, StoreResult] = field(default_factory=dict)
    reinforced: set[str] = field(default_factory=set)  # ids repeated so far (read again)
    created: list[NewMemory] = field(default_factory=list)  # new in this request
    owed: list[MemoryRecord] = field(default_factory=list)  # stored by an earlier try


class WriteExecutor:
    def __init__(self, ports: StorePorts, episodes: EpisodeAssigner | None) -> None:
        self.ports = ports
        self.episodes = episodes

    async def apply(self, batch: WriteBatch) -> list[StoreResult]:
        """Carry out `batch`; one result per item, in order."""
        out = _Outcome()
        await self._stored_copies(batch, out)
        await self._new_or_merged(batch, out)
        await self._persist(batch, out)
        await self._repeats_in_batch(batch, out)
        results = [out.results[d.index] for d in batch.decisions]
        for r in results:
            MEMORIES_WRITTEN.labels(r.status).inc()
            log.info("memory_stored", tenant=batch.tenant, memory_id=r.id, status=r.status)
        return results

    async def _stored_copies(self, batch: WriteBatch, out: _Outcome) -> None:
        """Exact copies of stored memories: reinforced (the latest state read again for a
        second copy in the request); one stored by an earlier try of the request is owed
        its events."""
        for d in batch.decisions:
            point = batch.stored.get(d.memory_id or "")
            if point is None or d.first is not None or d.status == "merged":
                continue  # (a merge's twin is read in `_new_or_merged`)
            if d.replayed:
                out.owed.append(MemoryRecord.from_payload(point.payload))
                out.results[d.index] = _created(batch, d.index, point.id)
            elif d.status == "reinforced":
                if point.id in out.reinforced:
                    point = (await self.ports.vectors.get(batch.tenant, [point.id]) or [point])[0]
                await self._reinforce(batch, point, d.index, out)
                out.results[d.index] = StoreResult(id=point.id, status="reinforced")

    async def _new_or_merged(self, batch: WriteBatch, out: _Outcome) -> None:
        """In request order: a near duplicate merged into its stored twin (read whole
        here, its latest state; deleted meanwhile: created instead), a new memory kept
        for the upsert."""
        for d in batch.decisions:
            if d.first is not None or d.index in out.results:
                continue
            if d.status == "merged" and d.memory_id is not None:
                found = await self.ports.vectors.get(batch.tenant, [d.memory_id])
                if found:
                    await self._reinforce(batch, found[0], d.index, out)
                    out.results[d.index] = StoreResult(id=found[0].id, status="merged")
                    continue
            new = batch.new[d.index]
            out.created.append(new)
            out.results[d.index] = _created(batch, d.index, new.record.id)

    async def _persist(self, batch: WriteBatch, out: _Outcome) -> None:
        """The new memories' episodes, one upsert, then their events (and those owed)."""
        tenant, records = batch.tenant, [n.record for n in out.created]
        if self.episodes is not None:
            await self.episodes.assign(records)  # (sets `episode` on the records)
        points = [
            VectorPoint(
                id=n.record.id, vector=n.vector, payload=n.record.to_payload(), sparse=n.sparse
            )
            for n in out.created
        ]
        # Pinned memories: recall replicas drop their pinned cache for this tenant.
        pinned = [
            MemoryChanged(tenant=tenant, memory_id=r.id, change="pinned")
            for r in records + out.owed
            if r.pinned
        ]
        redis = self.ports.redis
        if points:
            # Noted before the upsert, crossed out once published: a write whose publish
            # failed (Redis restarting) has its events sent by the sweeper within a minute.
            await note(redis, tenant, [r.id for r in records])
            await owe(redis, pinned)
            await self.ports.vectors.upsert(points)
        announced = records + out.owed
        if not announced:
            return
        await self.ports.bus.publish_many(STREAM_WRITTEN, [MemoryWritten.of(r) for r in announced])
        await cross_out(redis, tenant, [r.id for r in announced])
        await pay(self.ports, pinned)

    async def _repeats_in_batch(self, batch: WriteBatch, out: _Outcome) -> None:
        """Exact copies and near duplicates of the request's own new memories: each
        reinforces the memory its first item ended as, at its own time."""
        for d in batch.decisions:
            if d.first is None:
                continue
            first = out.results[d.first]
            assert first.id is not None
            again = await self.ports.vectors.get(batch.tenant, [first.id])
            if again:
                await self._reinforce(batch, again[0], d.index, out)
            out.results[d.index] = StoreResult(id=first.id, status=d.status)

    async def _reinforce(
        self, batch: WriteBatch, point: ScoredPoint, index: int, out: _Outcome
    ) -> None:
        """A repeat strengthens the memory and is remembered; the original date stays.
        A replayed write's repeat is skipped when the first try recorded it."""
        out.reinforced.add(point.id)
        tenant = batch.tenant
        rec = MemoryRecord.from_payload(point.payload)
        strength = rec.strength.reinforced(batch.at[index])
        at = max(batch.at[index], rec.strength.t_ref)
        if batch.once and at in rec.repeats:
            return
        repeats = [*rec.repeats, at]
        # A repeat of an archived memory reactivates it (strength.reactivates).
        patch = {**rec.strength_patch(strength, at), "repeats": [d.isoformat() for d in repeats]}
        # The sweeper adds the repeat to the memory's routine (absence flags count it).
        changes = [MemoryChanged(tenant=tenant, memory_id=rec.id, change="repeated")]
        if "state" in patch:
            changes.insert(0, MemoryChanged(tenant=tenant, memory_id=rec.id, change="reactivated"))
        await owe(self.ports.redis, changes)
        await self.ports.vectors.set_payload(tenant, rec.id, patch)
        await pay(self.ports, changes)


def _created(batch: WriteBatch, index: int, memory_id: str) -> StoreResult:
    return StoreResult(id=memory_id, status="redacted" if index in batch.redacted else "created")
