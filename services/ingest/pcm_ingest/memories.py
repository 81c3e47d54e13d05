"""Reads and edits of stored memories (GET, list, stats, PATCH, DELETE of /v1/memories):
the write path (`pcm_ingest.service`) only adds memories."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from pcm_common.data.forgetting import Forgetter
from pcm_common.domain import versions
from pcm_common.domain.clock import utcnow
from pcm_common.domain.figures import extract_figures
from pcm_common.domain.memory import (
    DERIVED_FIELDS,
    GraphInfo,
    MemoryRecord,
    Source,
    State,
    text_hash,
)
from pcm_common.domain.strength import initial_strength
from pcm_common.judge.features import FEATURES_FIELD
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.messaging.outbox import cross_out, note, owe, pay
from pcm_common.models.affect import classify
from pcm_common.models.sparse import encode_document
from pcm_common.ports import WritePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import memory_lock
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.vectors import Filter, VectorPoint
from pcm_ingest.schemas import MemoryIn, MemoryPatch

log = get_logger("ingest")

# The write firewall's screen of a request's items (`IngestService.screen`): the items as
# they may be stored, and which of them it redacted; raises for a blocked finding.
Screen = Callable[[str, list[MemoryIn]], Awaitable[tuple[list[MemoryIn], set[int]]]]

# Payload fields for the services' own use: not part of a memory's public view.
_INTERNAL_FIELDS = DERIVED_FIELDS | {FEATURES_FIELD}


def present(payload: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The public view of a record: payload plus its current (lazily decayed) strength."""
    out = {k: v for k, v in payload.items() if k not in _INTERNAL_FIELDS}
    rec = MemoryRecord.from_payload(payload)
    out["current_strength"] = round(rec.strength.at(now or utcnow(), rec.pinned), 6)
    return out


class MemoryEdits:
    def __init__(
        self, ports: WritePorts, screen: Screen, *, affect_tags: bool, locks: KeyLocks
    ) -> None:
        self.ports = ports
        self.screen = screen
        self.affect_tags = affect_tags
        self.locks = locks
        self.forgetter = Forgetter(ports)

    async def get(self, tenant: str, memory_id: str) -> dict[str, Any] | None:
        found = await self.ports.vectors.get(tenant, [memory_id])
        return present(found[0].payload) if found else None

    async def list(
        self, tenant: str, flt: Filter, limit: int, offset: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        points, nxt = await self.ports.vectors.scroll(tenant, flt=flt, limit=limit, offset=offset)
        return [present(p.payload) for p in points], nxt

    async def count(self, tenant: str, flt: Filter) -> int:
        """Every memory `flt` matches (the listing's filter: episode records included)."""
        return await self.ports.vectors.count(tenant, flt)

    async def stats(self, tenant: str, where: dict[str, Any]) -> dict[str, Any]:
        """Counts by state and pinned among the memories matching `where`, and the
        episode records among them (counted apart: they are derived, not memories)."""
        records = {"source": Source.CONSOLIDATION.value}
        count = self.ports.vectors.count
        states = [s.value for s in State]
        totals = await asyncio.gather(
            *(
                count(tenant, Filter(must={**where, "state": st}, must_not=records))
                for st in states
            ),
            count(tenant, Filter(must={**where, "pinned": True}, must_not=records)),
            count(tenant, Filter(must={**where, **records})),
        )
        by_state = dict(zip(states, totals[: len(states)], strict=True))
        return {
            "memories": sum(by_state.values()),
            "by_state": by_state,
            "pinned": totals[len(states)],
            "episode_records": totals[len(states) + 1],
        }

    async def patch(self, tenant: str, memory_id: str, patch: MemoryPatch) -> dict[str, Any] | None:
        # One memory's PATCH and DELETE take turns: a PATCH that read it before a DELETE
        # and wrote it back after brought it back.
        async with self.locks.hold([memory_lock(tenant, memory_id)]):
            return await self._patch(tenant, memory_id, patch)

    async def delete(self, tenant: str, memory_id: str) -> bool:
        async with self.locks.hold([memory_lock(tenant, memory_id)]):
            return await self.forgetter.forget(tenant, memory_id)

    async def _patch(
        self, tenant: str, memory_id: str, patch: MemoryPatch
    ) -> dict[str, Any] | None:
        found = await self.ports.vectors.get(tenant, [memory_id])
        if not found:
            return None
        stored = found[0].payload
        rec = MemoryRecord.from_payload(stored)
        history = list(stored.get("history", []))
        change_kind = self._apply(rec, await self._screened(tenant, patch), history, utcnow())
        changes = rec.to_payload()
        changes["history"] = history
        # Both events are owed before the store write (`pcm_common.messaging.outbox`).
        changed = [MemoryChanged(tenant=tenant, memory_id=rec.id, change=change_kind)]
        await owe(self.ports.redis, changed)
        if rec.version != stored.get("version"):
            changed += await self._rewrite(tenant, rec, changes)
        else:
            await self.ports.vectors.set_payload(tenant, rec.id, changes)
        await pay(self.ports, changed)
        log.info("memory_patched", tenant=tenant, memory_id=rec.id, change=change_kind)
        return present(changes)

    async def _screened(self, tenant: str, patch: MemoryPatch) -> MemoryPatch:
        """The patch as the write firewall lets it be stored: the same screen as a write,
        of the new text and the new metadata."""
        if patch.text is None and not patch.metadata:
            return patch
        # (A placeholder when the text stays: the stored one was screened already.)
        probe = MemoryIn(text=patch.text or "-", metadata=patch.metadata or {})
        (checked,), _ = await self.screen(tenant, [probe])
        if patch.text is not None:
            patch = patch.model_copy(update={"text": checked.text})
        if patch.metadata:
            patch = patch.model_copy(update={"metadata": checked.metadata})
        return patch

    def _apply(
        self, rec: MemoryRecord, patch: MemoryPatch, history: builtins.list[Any], now: datetime
    ) -> str:
        """Apply `patch` to `rec` (a new text a new version, the old one in `history`);
        returns the kind of change it announces."""
        change_kind = "updated"
        if patch.text is not None and patch.text != rec.text:
            history.append(versions.entry(rec.version, rec.text, now, reason="edit"))
            rec.text, rec.text_hash = patch.text, text_hash(patch.text)
            rec.figures = extract_figures(patch.text)
            if self.affect_tags:
                rec.affect = classify(patch.text)
            rec.version += 1
            rec.graph = GraphInfo()
        if patch.importance is not None:
            rec.importance = patch.importance
        if patch.pinned is not None and patch.pinned != rec.pinned:
            rec.pinned = patch.pinned
            change_kind = "pinned" if patch.pinned else "unpinned"
            if not patch.pinned:  # unpinning starts normal decay from now
                rec.strength.s_ref, rec.strength.t_ref = initial_strength(rec.importance.value), now
        if patch.state is not None:
            rec.state = patch.state
        if patch.metadata is not None:
            rec.metadata = patch.metadata
        return change_kind

    async def _rewrite(
        self, tenant: str, rec: MemoryRecord, changes: dict[str, Any]
    ) -> builtins.list[MemoryChanged]:
        """A new text: embedded again, stored whole, its episode record dropped and the
        memory announced as written (extraction and judging again); returns the change
        events owed."""
        vec = await self.ports.embedder.embed_one(rec.text)
        await note(self.ports.redis, tenant, [rec.id])
        await self.ports.vectors.upsert(
            [VectorPoint(id=rec.id, vector=vec, payload=changes, sparse=encode_document(rec.text))]
        )
        dropped = await self.forgetter.drop_episode_record(tenant, rec.id, changes)
        # (Every store change first: a publish that fails leaves events owed, not changes
        # undone.)
        await self.ports.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec))
        await cross_out(self.ports.redis, tenant, [rec.id])
        return dropped
