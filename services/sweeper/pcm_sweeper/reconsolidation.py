"""Reconsolidation (the mnemos write-up's MutableRAG) in the background.

- A recall's event makes the memories it delivered first (`reconsolidation_labile_top`, at
  most 20) labile for `reconsolidation_labile_s` (`stores.redis.lability`).
- A new memory (`pcm.memory.written`, status `created`) is compared with the labile
  memories of its owner's group that resemble it (cosine at least
  `reconsolidation_min_cos`); each one the rules say it updates
  (`domain.reconsolidation.judge`, and a model too when one is configured:
  `pcm_sweeper.deciding`) is rewritten as a new version, its earlier text kept in
  its history (`domain.versions`). Each rewrite is claimed atomically: the memory still
  labile, out of its cooldown, within its recall's rewrites.
- A feedback request (`pcm.memory.reconsolidate`, `messaging.reconsolidation`) makes the
  memory labile as `wrong` and rewrites it from the newest stored memory that updates it
  (a change cue then not needed); if none does yet, the next write that does.
- Pinned memories (guardrails) are never rewritten: they change by an edit only.

The new text (`pcm_sweeper.rewriting`) goes through the write firewall first: a text with a
blocked secret is not stored, PII is redacted as on the API's writes. The rewrite is
stored as a PATCH's new text is: embedded again, its episode record dropped, announced as
written (status `reconsolidated`, which reconsolidates nothing further) and as updated.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pcm_common.data.forgetting import Forgetter
from pcm_common.domain import versions, visibility
from pcm_common.domain.clock import utcnow
from pcm_common.domain.figures import extract_figures
from pcm_common.domain.memory import GraphInfo, MemoryRecord, Source, State, text_hash
from pcm_common.firewall import WriteFirewall
from pcm_common.messaging.events import (
    STREAM_WRITTEN,
    MemoryChanged,
    MemoryRecalled,
    MemoryWritten,
    ReconsolidationRequested,
)
from pcm_common.messaging.outbox import cross_out, note, owe, pay
from pcm_common.models.sparse import encode_document
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import memory_lock
from pcm_common.stores.redis.lability import WRONG, Claim, Lability, LabilityRules
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorPoint
from pcm_sweeper.deciding import Decider, LlmDecider, RuleDecider
from pcm_sweeper.rewriting import LlmRewriter, LocalRewriter, Rewriter
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper")

# mnemos's cap on a recall's labile window: a recall makes at most this many labile.
MAX_LABILE_PER_RECALL = 20
_FIELDS = ("text", "created_at", "state", "superseded_by", "pinned")


def rewriter_of(settings: SweeperSettings) -> Rewriter:
    if settings.reconsolidation_model:
        options: dict[str, Any] = {}
        if settings.reconsolidation_api_base:
            options["api_base"] = settings.reconsolidation_api_base
        return LlmRewriter(
            settings.reconsolidation_model,
            timeout_s=settings.reconsolidation_timeout_s,
            **options,
        )
    return LocalRewriter()


def decider_of(settings: SweeperSettings) -> Decider:
    if settings.reconsolidation_model and settings.reconsolidation_model_decides:
        options: dict[str, Any] = {}
        if settings.reconsolidation_api_base:
            options["api_base"] = settings.reconsolidation_api_base
        return LlmDecider(
            settings.reconsolidation_model,
            timeout_s=settings.reconsolidation_timeout_s,
            **options,
        )
    return RuleDecider()


class Reconsolidation:
    def __init__(
        self,
        res: SweeperPorts,
        settings: SweeperSettings,
        *,
        rewriter: Rewriter | None = None,
        decider: Decider | None = None,
        firewall: WriteFirewall | None = None,
    ) -> None:
        self.res = res
        self.settings = settings
        self.on = settings.reconsolidation
        self.lability = Lability(
            res.redis,
            LabilityRules(
                labile_s=settings.reconsolidation_labile_s,
                cooldown_s=settings.reconsolidation_cooldown_s,
                max_per_recall=settings.reconsolidation_max_per_recall,
            ),
        )
        self.rewriter = rewriter or rewriter_of(settings)
        self.decider = decider or decider_of(settings)
        self.firewall = firewall or settings.write_firewall()
        self.locks = KeyLocks(res.redis)
        self.forgetter = Forgetter(res)

    # ---- what makes a memory labile ----------------------------------------------------

    async def on_recalled(self, event: MemoryRecalled) -> None:
        """The recall's first delivered memories become labile (a redelivered event only
        renews their window)."""
        if not self.on:
            return
        top = min(self.settings.reconsolidation_labile_top, MAX_LABILE_PER_RECALL)
        ranked = sorted(event.items, key=lambda i: i.rank)
        ids = list(dict.fromkeys(i.memory_id for i in ranked))[:top]
        await self.lability.mark(event.tenant, ids, event.event_id)

    async def on_requested(self, event: ReconsolidationRequested) -> None:
        """Feedback marked the memory wrong: labile now, rewritten by the newest stored
        memory that updates it, else by the next write that does."""
        if not self.on:
            return
        tenant, mid = event.tenant, event.memory_id
        found = await self.res.vectors.get(tenant, [mid], with_vectors=True)
        if not found:
            log.info("reconsolidation_request_ignored", tenant=tenant, memory_id=mid)
            return
        point = found[0]
        if point.payload.get("pinned"):
            log.info("reconsolidation_request_pinned", tenant=tenant, memory_id=mid)
            return  # a guardrail changes by an edit only
        by = WRONG + event.event_id
        await self.lability.mark(tenant, [mid], by)
        log.info("reconsolidation_requested", tenant=tenant, memory_id=mid, reason=event.reason)
        if not point.vector or not any(point.vector):
            return  # awaiting repair: the next write that updates it still will
        old = str(point.payload.get("text", ""))
        t0 = _ts(point.payload.get("created_at"))
        newer = [
            h
            for h in await self._similar(tenant, point, exclude=mid)
            if _ts(h.payload.get("created_at")) > t0
        ]
        newer.sort(key=lambda h: _ts(h.payload.get("created_at")), reverse=True)
        for h in newer:
            new = str(h.payload.get("text", ""))
            verdict = await self.decider.decide(old, new, wrong=True)
            if verdict.update:
                await self._rewrite(tenant, mid, by, new, h.id, verdict.reason)
                return

    # ---- newer information ---------------------------------------------------------------

    async def on_written(self, event: MemoryWritten) -> None:
        """A new memory rewrites the labile memories of its group that it updates."""
        # Only new information: not a repeat, a merge, a repair's republish, nor a rewrite.
        if not self.on or event.status != "created":
            return
        tenant = event.tenant
        found = await self.res.vectors.get(tenant, [event.memory_id], with_vectors=True)
        if not found or not found[0].vector or not any(found[0].vector):
            return
        point = found[0]
        if point.payload.get("source") == Source.CONSOLIDATION.value:
            return
        t_new = _ts(point.payload.get("created_at"))
        similar = [
            h
            for h in await self._similar(tenant, point, exclude=point.id)
            if _ts(h.payload.get("created_at")) <= t_new
        ]
        labile = await self.lability.labile(tenant, [h.id for h in similar])
        new = str(point.payload.get("text", event.text))
        for h in similar:
            by = labile.get(h.id)
            if by is None:
                continue
            old = str(h.payload.get("text", ""))
            verdict = await self.decider.decide(old, new, wrong=by.startswith(WRONG))
            log.debug(
                "reconsolidation_judged",
                tenant=tenant,
                memory_id=h.id,
                by_memory=point.id,
                update=verdict.update,
                reason=verdict.reason,
            )
            if verdict.update:
                await self._rewrite(tenant, h.id, by, new, point.id, verdict.reason)

    async def _similar(self, tenant: str, point: ScoredPoint, *, exclude: str) -> list[ScoredPoint]:
        """The active memories of the point's own group (`visibility.peers`) that resemble
        it, best first: the ones newer information may be about."""
        s = self.settings
        # A memory the new one superseded (`sweeper.judging`, in its own consumer) is
        # still rewritten: whichever consumer ran first, the outcome is the same.
        states = [State.ACTIVE.value, State.SUPERSEDED.value]
        flt = Filter(
            must={"state": states, **visibility.peers(point.payload)},
            must_not={"source": Source.CONSOLIDATION.value},
        )
        hits = await self.res.vectors.search(
            tenant,
            list(point.vector or []),
            limit=s.reconsolidation_candidates + 1,
            flt=flt,
            fields=_FIELDS,
        )
        return [
            h
            for h in hits
            if h.id != exclude
            and h.score >= s.reconsolidation_min_cos
            and not h.payload.get("pinned")  # a guardrail changes by an edit only
            and (
                h.payload.get("state") == State.ACTIVE.value
                or h.payload.get("superseded_by") == point.id
            )
        ]

    # ---- the rewrite ---------------------------------------------------------------------

    async def _rewrite(
        self, tenant: str, memory_id: str, by: str, new: str, source_id: str, why: str
    ) -> None:
        claim = await self.lability.claim(tenant, memory_id, by)
        if claim is not Claim.CLAIMED:
            log.info(
                "reconsolidation_skipped", tenant=tenant, memory_id=memory_id, claim=claim.name
            )
            return
        try:
            await self._store(tenant, memory_id, new, source_id, why)
        except BaseException:
            await self.lability.release(tenant, memory_id)  # the retry may claim again
            raise

    async def _store(self, tenant: str, memory_id: str, new: str, source_id: str, why: str) -> None:
        found = await self.res.vectors.get(tenant, [memory_id], fields=("text", "version"))
        if not found:
            return
        read = found[0].payload
        old = str(read.get("text", ""))
        screened = self.firewall.screen(await self.rewriter.rewrite(old, new))
        if screened.blocked:
            log.warning(
                "reconsolidation_blocked",
                tenant=tenant,
                memory_id=memory_id,
                kinds=screened.blocked_kinds,
            )
            return
        text = screened.text
        vec = await self.res.embedder.embed_one(text)
        # The memory's PATCH and DELETE take turns with this write; the text was read
        # before the model's call, so an edit meanwhile wins and this rewrite is dropped.
        async with self.locks.hold([memory_lock(tenant, memory_id)]):
            found = await self.res.vectors.get(tenant, [memory_id])
            if not found or found[0].payload.get("version") != read.get("version"):
                log.info("reconsolidation_stale", tenant=tenant, memory_id=memory_id)
                return
            await self._write(tenant, found[0].payload, text, vec, source_id, utcnow())
        log.info(
            "memory_reconsolidated",
            tenant=tenant,
            memory_id=memory_id,
            by_memory=source_id,
            why=why,
            redacted=bool(screened.redacted),
        )

    async def _write(
        self,
        tenant: str,
        payload: dict[str, Any],
        text: str,
        vec: list[float],
        source_id: str,
        now: datetime,
    ) -> None:
        rec = MemoryRecord.from_payload(payload)
        history = [*payload.get("history", [])]
        history.append(
            versions.entry(rec.version, rec.text, now, reason="reconsolidation", by=source_id)
        )
        rec.text, rec.text_hash = text, text_hash(text)
        rec.figures = extract_figures(text)
        rec.version += 1
        rec.graph = GraphInfo()
        # Fields this service does not know are kept as they are.
        changes = {**payload, **rec.to_payload(), "history": history}
        changed = [MemoryChanged(tenant=tenant, memory_id=rec.id, change="updated")]
        await owe(self.res.redis, changed)
        await note(self.res.redis, tenant, [rec.id])
        await self.res.vectors.upsert(
            [VectorPoint(id=rec.id, vector=vec, payload=changes, sparse=encode_document(text))]
        )
        changed += await self.forgetter.drop_episode_record(tenant, rec.id, changes)
        await self.res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec, "reconsolidated"))
        await cross_out(self.res.redis, tenant, [rec.id])
        await pay(self.res, changed)


def _ts(value: Any) -> float:
    """A payload's `created_at` as epoch seconds (0 when absent)."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value).timestamp()
    return 0.0
