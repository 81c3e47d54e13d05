"""Retrieval feedback: each recall's record, and what the two feedback routes change.

- A recall is recorded (`remember`) with its cue vector and delivered ids; its answer
  carries the record's id (`recall_id`).
- Feedback on a recall (`on_recall`) sets signals on its memories: the recall's cue terms
  (`domain.feedback`) follow from them, and a memory newly marked helpful is reinforced as
  a recall reinforces (a `memory.recalled` event for the sweeper, with an id of its own so
  it is applied once).
- Feedback on one memory (`on_memory`) does the same for that memory: on a recall's cue
  when it names one, else as a small term for every query. `wrong` asks for the memory's
  reconsolidation through `on_wrong` (by default a `ReconsolidationRequested` event).

Signals are set, not added: the same feedback again changes nothing, and a recall's terms
are bounded by one signal's amount per memory. Every refusal happens before any change.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from pcm_common.domain import feedback
from pcm_common.domain.clock import utcnow
from pcm_common.domain.filters import payload_matches
from pcm_common.domain.visibility import audience
from pcm_common.feedback.schemas import FeedbackOut, MemoryFeedbackIn, RecallFeedbackIn
from pcm_common.feedback.settings import FeedbackSettings
from pcm_common.feedback.terms import FeedbackTerms
from pcm_common.messaging.events import STREAM_RECALLED, MemoryRecalled, RecalledItem
from pcm_common.messaging.reconsolidation import request_reconsolidation
from pcm_common.ports import EventBus
from pcm_common.runtime.http import ApiError
from pcm_common.runtime.telemetry import FEEDBACK_SIGNALS, RECONSOLIDATION_REQUESTS, get_logger
from pcm_common.stores.qdrant.common import canonical_id
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.feedback import FeedbackStore, RecallRecord, pack_vector
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.vectors import VectorStore

log = get_logger("feedback")

# (tenant, memory id) -> None: asks for the memory's reconsolidation.
OnWrong = Callable[[str, str], Awaitable[None]]

_OWNER_FIELDS = ["user_id", "scope", "workspace", "project", "state"]


def _event_id(*parts: str) -> str:
    """A reinforcement event's id from what it reinforces: the sweeper applies an event
    id once per memory, so the same helpful signal never reinforces twice."""
    return hashlib.sha256("\x1f".join(["feedback", *parts]).encode()).hexdigest()[:32]


class FeedbackService:
    def __init__(
        self,
        redis: Redis,
        vectors: VectorStore,
        bus: EventBus,
        settings: FeedbackSettings,
        on_wrong: OnWrong | None = None,
    ) -> None:
        self.enabled = settings.feedback_enabled
        self.rule = settings.feedback_rule()
        self.store = FeedbackStore(
            redis, ttl_s=settings.feedback_recall_ttl_s, max_cues=settings.feedback_max_cues
        )
        self.terms = FeedbackTerms(self.store, self.rule)
        self.vectors = vectors
        self.bus = bus
        self.locks = KeyLocks(redis)
        self.on_wrong: OnWrong = on_wrong or self.request_rewrite

    async def request_rewrite(self, tenant: str, memory_id: str) -> None:
        """The default `on_wrong`: the sweeper's reconsolidation rewrites the memory from
        the newest stored memory that updates it (`pcm_common.messaging.reconsolidation`)."""
        RECONSOLIDATION_REQUESTS.inc()
        log.info("reconsolidation_requested", tenant=tenant, memory_id=memory_id, reason="feedback")
        await request_reconsolidation(self.bus, tenant, memory_id, "feedback")

    # ---- the recall side ---------------------------------------------------------------

    async def remember(
        self,
        tenant: str,
        *,
        at: datetime,
        user_id: str | None,
        workspace: str | None,
        project: str | None,
        query_vec: Sequence[float],
        delivered: Sequence[str],
    ) -> str:
        """Records one recall; returns its id."""
        rec = RecallRecord(
            recall_id=uuid.uuid4().hex,
            at=at,
            user_id=user_id,
            workspace=workspace,
            project=project,
            cue=pack_vector(query_vec),
            delivered=list(dict.fromkeys(delivered)),
        )
        await self.store.remember(tenant, rec)
        return rec.recall_id

    async def bias(
        self, tenant: str, user_id: str | None, query_vec: list[float]
    ) -> dict[str, float]:
        """Memory id -> the feedback term of its score in this recall."""
        return await self.terms.bias(tenant, user_id, query_vec) if self.enabled else {}

    # ---- the routes --------------------------------------------------------------------

    async def on_recall(self, tenant: str, recall_id: str, body: RecallFeedbackIn) -> FeedbackOut:
        helpful = [canonical_id(m) for m in body.helpful]
        not_helpful = [canonical_id(m) for m in body.not_helpful]
        missed = [canonical_id(m) for m in body.missed]
        async with self.locks.hold([keys.feedback_lock(tenant, recall_id)]):
            rec = await self._record(tenant, recall_id)
            bad = feedback.problems(rec.delivered, helpful, not_helpful, missed)
            if bad:
                raise ApiError(422, "invalid_feedback", bad)
            await self._require_visible(tenant, rec, missed)
            return await self._apply(tenant, rec, feedback.signals_of(helpful, not_helpful, missed))

    async def on_memory(self, tenant: str, memory_id: str, body: MemoryFeedbackIn) -> FeedbackOut:
        mid = _memory_id(memory_id)
        found = await self.vectors.get(tenant, [mid], fields=_OWNER_FIELDS)
        if not found:
            raise ApiError(404, "memory_not_found", memory_id)
        if body.recall_id is not None:
            async with self.locks.hold([keys.feedback_lock(tenant, body.recall_id)]):
                rec = await self._record(tenant, body.recall_id)
                if mid not in rec.delivered:
                    raise ApiError(
                        422, "invalid_feedback", [f"{mid} was not delivered by this recall"]
                    )
                out = await self._apply(tenant, rec, {mid: body.signal})
            out.memory_id = mid
            return out
        async with self.locks.hold([keys.feedback_lock(tenant, "memory:" + mid)]):
            if await self.store.memory_signal(tenant, mid) == body.signal:
                return FeedbackOut(memory_id=mid, unchanged=[mid])
            await self.store.set_memory_signal(tenant, mid, body.signal)
        FEEDBACK_SIGNALS.labels(body.signal).inc()
        out = FeedbackOut(memory_id=mid, changed={mid: body.signal})
        if body.signal == "helpful":
            # Activation spreads as far as the memory's owner sees (`audience`).
            out.reinforced = await self._reinforce(
                tenant, [mid], at=utcnow(), key=("memory", mid), owner=found[0].payload
            )
        elif body.signal == "wrong":
            out.reconsolidation = await self._wrong(tenant, [mid])
        return out

    # ---- the parts ---------------------------------------------------------------------

    async def _record(self, tenant: str, recall_id: str) -> RecallRecord:
        rec = await self.store.record(tenant, recall_id)
        if rec is None:  # unknown, expired, or another tenant's: the key is per tenant
            raise ApiError(404, "recall_not_found", recall_id)
        return rec

    async def _require_visible(self, tenant: str, rec: RecallRecord, ids: list[str]) -> None:
        """422 unless every id is a memory the recall's asker could have been given."""
        if not ids:
            return
        seen = audience(rec.user_id, rec.workspace, rec.project)
        found = await self.vectors.get(tenant, ids, fields=_OWNER_FIELDS)
        ok = {p.id for p in found if payload_matches(seen, p.payload)}
        unknown = [m for m in ids if m not in ok]
        if unknown:
            raise ApiError(
                422,
                "invalid_feedback",
                [f"{m} is not a memory this recall could show" for m in unknown],
            )

    async def _apply(
        self, tenant: str, rec: RecallRecord, wanted: Mapping[str, str]
    ) -> FeedbackOut:
        new = feedback.changed(rec.signals, wanted)
        out = FeedbackOut(
            recall_id=rec.recall_id,
            changed=new,
            unchanged=[m for m in wanted if m not in new],
        )
        if not new:
            return out
        rec.signals.update(new)
        await self.store.save(tenant, rec, feedback.cue_terms(rec.signals, self.rule))
        for signal in new.values():
            FEEDBACK_SIGNALS.labels(signal).inc()
        helpful = [m for m, s in new.items() if s == "helpful"]
        if helpful:
            out.reinforced = await self._reinforce(
                tenant,
                helpful,
                at=rec.at,
                key=("recall", rec.recall_id),
                owner=rec.model_dump(include={"user_id", "workspace", "project"}),
            )
        out.reconsolidation = await self._wrong(tenant, [m for m, s in new.items() if s == "wrong"])
        return out

    async def _reinforce(
        self,
        tenant: str,
        ids: list[str],
        *,
        at: datetime,
        key: tuple[str, str],
        owner: Mapping[str, Any],
    ) -> list[str]:
        """Reinforces `ids` as a recall that delivered them would (the sweeper's
        reinforcement and spreading activation); a failure to publish is logged."""
        event = MemoryRecalled(
            event_id=_event_id(tenant, *key, *sorted(ids)),
            tenant=tenant,
            now=at,
            user_id=owner.get("user_id"),
            workspace=owner.get("workspace"),
            project=owner.get("project"),
            items=[RecalledItem(memory_id=m, rank=i, relevance=1.0) for i, m in enumerate(ids)],
        )
        try:
            await self.bus.publish(STREAM_RECALLED, event)
        except Exception as exc:
            log.warning("feedback_reinforce_failed", tenant=tenant, error=repr(exc)[:200])
            return []
        return ids

    async def _wrong(self, tenant: str, ids: list[str]) -> list[str]:
        for mid in ids:
            await self.on_wrong(tenant, mid)
        return ids


def _memory_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        raise ApiError(404, "memory_not_found", "not a memory id") from None
