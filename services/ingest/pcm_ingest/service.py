"""Write path: validation is done by the schemas; here capture checks, the firewall screen,
then each request planned (`plan.plan_writes`: created, reinforced or merged) from what the
stores hold and carried out (`writer.WriteExecutor`: upsert, repeats, events)."""

from __future__ import annotations

import asyncio
import time
import uuid
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pcm_common.domain import salience as sal
from pcm_common.domain import visibility
from pcm_common.domain.capture import predictable
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.domain.figures import figures_key
from pcm_common.domain.governance import admits, effective, is_automatic
from pcm_common.domain.memory import (
    Affect,
    GraphInfo,
    Importance,
    MemoryRecord,
    Scope,
    Strength,
    text_hash,
)
from pcm_common.domain.strength import initial_strength
from pcm_common.models.affect import classify
from pcm_common.ports import WritePorts
from pcm_common.runtime.telemetry import MEMORIES_WRITTEN, get_logger
from pcm_common.stores.redis.governance import GovernanceStore
from pcm_common.stores.redis.keys import TENANTS, copy_lock, last_write
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_ingest.capture_gate import build_gate, with_salience
from pcm_ingest.derive import Derived
from pcm_ingest.episodes import EpisodeAssigner
from pcm_ingest.firewall import SecretDetected
from pcm_ingest.firewall.runner import ScreenRunner
from pcm_ingest.idempotency import IdempotencyKeys, WritePlan
from pcm_ingest.memories import MemoryEdits, present
from pcm_ingest.plan import CopyKey, Twin, WriteDecision, WriteItem, fresh_items, plan_writes
from pcm_ingest.schemas import MemoryIn, StoreResult
from pcm_ingest.settings import IngestSettings
from pcm_ingest.tenant_gates import TenantGates
from pcm_ingest.twins import TwinFinder
from pcm_ingest.writer import NewMemory, WriteBatch, WriteExecutor

log = get_logger("ingest")


class CaptureRefused(Exception):
    """An explicit store into a scope whose policy keeps only hook captures: nothing of
    the request is stored. `items`: index and capture mode per refused item."""

    def __init__(self, items: list[dict[str, object]]) -> None:
        super().__init__(f"capture mode refuses {len(items)} item(s)")
        self.items = items


def _owner_fields(item: MemoryIn) -> dict[str, Any]:
    """A write's owner fields, as `visibility` reads them: duplicates are duplicates only
    within one group (a project fact stays its own, one user's repeat never lands in a
    memory another user's recall would see)."""
    return {
        "user_id": item.user_id,
        "scope": item.scope.value,
        "workspace": item.workspace,
        "project": item.project,
    }


def _names(item: MemoryIn) -> list[tuple[str, str]]:
    """The identifiers a write names, which the firewall screens for secrets."""
    fields = (
        ("user_id", item.user_id),
        ("workspace", item.workspace),
        ("project", item.project),
        ("episode", item.episode),
    )
    return [(f, v) for f, v in fields if v]


@dataclass(frozen=True)
class _Fresh:
    """What the items with no exact copy got before planning, by index."""

    vectors: dict[int, list[float]]
    derived: Derived
    affects: dict[int, Affect]
    twins: dict[int, Twin | None]


class IngestService:
    """The write path: a request's items admitted, screened, planned and stored. Reads and
    edits of stored memories are `pcm_ingest.memories`."""

    def __init__(self, ports: WritePorts, settings: IngestSettings) -> None:
        self.ports = ports
        self.settings = settings
        self.locks = KeyLocks(ports.redis)
        self.firewall = settings.write_firewall()
        self.screens = ScreenRunner(
            self.firewall,
            process_chars=settings.firewall_process_chars,
            workers=settings.firewall_workers,
            deadline_s=settings.firewall_deadline_s,
        )
        self.gates = TenantGates(settings.large_writes_per_tenant, settings.large_write_wait_s)
        episodes = (
            EpisodeAssigner(ports.redis, settings.auto_episode_gap_min * 60.0)
            if settings.auto_episodes
            else None
        )
        self.governance = GovernanceStore(ports.redis)
        self.idempotency = IdempotencyKeys(ports.redis, settings.idempotency_lease_s)
        self.twins = TwinFinder(
            ports.vectors, settings.near_duplicate_cos, settings.near_duplicate_lookups
        )
        self.writer = WriteExecutor(ports, episodes)
        self.capture_gate = build_gate(ports, settings)

    def edits(self) -> MemoryEdits:
        """Reads and edits of the stored memories, screened by this service's firewall
        and taking turns on its locks."""
        return MemoryEdits(
            self.ports, self.screen, affect_tags=self.settings.affect_tags, locks=self.locks
        )

    async def admit(self, tenant: str, items: list[MemoryIn]) -> dict[int, str]:
        """Which items are skipped, and why: an automatic capture (a hook's) that the
        scope's capture mode does not keep (`capture_mode`) or that the capture gate finds
        predictable (`capture_gate`). Raises `CaptureRefused` for an explicit store that
        the scope's mode refuses: the client asked for it, so it must hear no."""
        policies = await self.governance.all(tenant)
        skipped: dict[int, str] = {}
        refused: list[dict[str, object]] = []
        for i, item in enumerate(items):
            mode = effective(
                policies, item.scope.value, item.workspace or "", item.project or ""
            ).capture_mode
            if not admits(mode, item.source):
                if is_automatic(item.source):
                    skipped[i] = "capture_mode"
                else:
                    refused.append({"index": i, "capture_mode": mode.value})
            elif (
                self.settings.capture_gate and is_automatic(item.source) and predictable(item.text)
            ):
                skipped[i] = "capture_gate"
        if refused:
            log.info("write_refused", tenant=tenant, items=refused)
            raise CaptureRefused(refused)
        for i, reason in skipped.items():
            log.info("capture_skipped", tenant=tenant, index=i, reason=reason)
        return skipped

    async def screen(self, tenant: str, items: list[MemoryIn]) -> tuple[list[MemoryIn], set[int]]:
        """The items as the firewall lets them be stored (text and metadata redacted), and
        which of them it redacted; raises `SecretDetected` (nothing stored) for a blocked
        finding in a text, a metadata key or value, or a name; `FirewallBusy` past the
        screen's deadline. One call for the batch, off the event loop, linear in its size
        (`pcm_ingest.firewall.runner`)."""
        with_meta = [i for i, item in enumerate(items) if item.metadata]
        names = sorted({v for item in items for _, v in _names(item)})
        screened, metas, bad_names = await self.screens.screen_request(
            [item.text for item in items],
            [items[i].metadata for i in with_meta],
            names,
        )
        meta_of = dict(zip(with_meta, metas, strict=True))
        bad = [
            {"index": i, "kinds": s.blocked_kinds} for i, s in enumerate(screened) if s.blocked
        ] + [
            {"index": i, "field": "metadata", "kinds": m.blocked_kinds}
            for i, m in meta_of.items()
            if m.blocked
        ]
        if bad_names:
            bad += [
                {"index": i, "field": field, "kinds": bad_names[v]}
                for i, item in enumerate(items)
                for field, v in _names(item)
                if v in bad_names
            ]
        if bad:
            log.info("write_blocked", tenant=tenant, items=bad)
            raise SecretDetected(bad)
        out, redacted = list(items), set()
        for i, item in enumerate(items):
            kinds = set(screened[i].redacted_kinds)
            update: dict[str, Any] = {"text": screened[i].text} if kinds else {}
            if i in meta_of and meta_of[i].redacted:
                kinds |= set(meta_of[i].redacted_kinds)
                update["metadata"] = meta_of[i].metadata
            if update:
                out[i] = item.model_copy(update=update)
                redacted.add(i)
                log.info("memory_redacted", tenant=tenant, index=i, kinds=sorted(kinds))
        return out, redacted

    async def store(
        self, tenant: str, items: list[MemoryIn], plan: WritePlan | None = None
    ) -> list[StoreResult]:
        """Store a request's items (after the capture checks): one result per item, in
        order; a skipped capture's result has no id. With a `plan` (an Idempotency-Key) the
        new memories' ids and the clock are the plan's, so a replay changes nothing."""
        skipped = await self.admit(tenant, items)
        salience = await self._salience(tenant, items, skipped, plan)
        for i, s in salience.items():
            if not s.keeps(self.settings.capture_salience_threshold):
                skipped[i] = "low_salience"
        ids = [plan.memory_id(tenant, i) if plan else None for i in range(len(items))]
        values = {i: s.value for i, s in salience.items()}
        if not skipped:
            return with_salience(await self._store(tenant, items, ids, plan, values), values)
        kept = [i for i in range(len(items)) if i not in skipped]
        out = [
            StoreResult(id=None, status="skipped", reason=skipped[i], salience=values.get(i))
            if i in skipped
            else None
            for i in range(len(items))
        ]
        if kept:
            try:
                stored = await self._store(
                    tenant,
                    [items[i] for i in kept],
                    [ids[i] for i in kept],
                    plan,
                    {n: values[i] for n, i in enumerate(kept) if i in values},
                )
            except SecretDetected as exc:  # name the items by their place in the request
                for bad in exc.items:
                    bad["index"] = kept[int(str(bad["index"]))]
                raise
            for i, result in zip(kept, stored, strict=True):
                out[i] = result.model_copy(update={"salience": values.get(i)})
        for r in out:
            if r is not None and r.status == "skipped":
                MEMORIES_WRITTEN.labels(r.status).inc()
        return [r for r in out if r is not None]

    async def _salience(
        self, tenant: str, items: list[MemoryIn], skipped: dict[int, str], plan: WritePlan | None
    ) -> dict[int, sal.Salience]:
        """The predictive gate's salience of the automatic captures the word list and the
        capture mode let through (`capture_gate`)."""
        if self.capture_gate is None:
            return {}
        which = [
            i for i, item in enumerate(items) if i not in skipped and is_automatic(item.source)
        ]
        if not which:
            return {}
        now = plan.now if plan else utcnow()
        judged = await self.capture_gate.judge(tenant, items, which, now, self._screen_texts)
        return {i: j.salience for i, j in judged.items()}

    async def _screen_texts(self, texts: list[str]) -> list[str | None]:
        """Texts as the firewall lets them be kept (None: blocked)."""
        screened, _, _ = await self.screens.screen_request(texts, [], [])
        return [None if s.blocked else s.text for s in screened]

    async def _store(
        self,
        tenant: str,
        items: list[MemoryIn],
        ids: list[str | None],
        plan: WritePlan | None,
        salience: dict[int, float] | None = None,
    ) -> list[StoreResult]:
        async with self._turn(tenant, items):
            return await self._store_turn(tenant, items, ids, plan, salience or {})

    def _turn(self, tenant: str, items: list[MemoryIn]) -> AbstractAsyncContextManager[None]:
        """A large request waits for one of its tenant's turns (`tenant_gates`)."""
        if sum(len(item.text) for item in items) < self.settings.firewall_process_chars:
            return nullcontext()
        return self.gates.turn(tenant)

    async def _store_turn(
        self,
        tenant: str,
        items: list[MemoryIn],
        ids: list[str | None],
        plan: WritePlan | None,
        salience: dict[int, float],
    ) -> list[StoreResult]:
        items, redacted = await self.screen(tenant, items)
        async with self.ports.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(TENANTS, tenant)
            pipe.set(last_write(tenant), f"{time.time():.3f}")  # the sweeper's idle trigger
            await pipe.execute()
        # (text hash, scope, workspace, project, user): a copy is a repeat in the same scope
        # and of the same user only. Each is locked from the lookup of a stored copy until
        # this request stored or reinforced it (`stores.redis.locks`: parallel copies made two).
        keys: list[CopyKey] = [
            (text_hash(item.text), *visibility.owner(_owner_fields(item))) for item in items
        ]
        async with self.locks.hold(copy_lock(tenant, k) for k in keys):
            return await self._store_screened(tenant, items, redacted, keys, ids, plan, salience)

    async def _store_screened(
        self,
        tenant: str,
        items: list[MemoryIn],
        redacted: set[int],
        keys: list[CopyKey],
        ids: list[str | None],
        plan: WritePlan | None,
        salience: dict[int, float],
    ) -> list[StoreResult]:
        """Plan the request (`plan.plan_writes`) from what the stores hold, then carry the
        plan out (`writer.WriteExecutor`)."""
        now = plan.now if plan else utcnow()
        found = await self._by_hashes(tenant, [k[0] for k in keys])
        stored = {key: p.id for key, p in found.items()}
        planned = [
            WriteItem(key, item.text, "", memory_id)
            for key, item, memory_id in zip(keys, items, ids, strict=True)
        ]
        fresh = await self._fresh(tenant, items, fresh_items(planned, stored))
        for i, vec in fresh.vectors.items():
            figures = figures_key(fresh.derived.figures[i])
            planned[i] = replace(planned[i], figures_key=figures, vector=vec)
        decisions = plan_writes(
            planned, stored, fresh.twins, min_cos=self.settings.near_duplicate_cos
        )
        batch = WriteBatch(
            tenant,
            decisions,
            stored={p.id: p for p in found.values()},
            new=self._new_memories(tenant, items, ids, fresh, decisions, now, salience),
            at=[as_utc(item.created_at or now) for item in items],
            redacted=frozenset(redacted),
            # A replay: repeats the first try recorded stay one.
            once=plan is not None and plan.replay,
        )
        return await self.writer.apply(batch)

    async def _fresh(self, tenant: str, items: list[MemoryIn], fresh: list[int]) -> _Fresh:
        """What the items with no exact copy get before planning: their vectors, what
        their texts imply, their affect, and their stored twins."""
        vectors = dict(
            zip(fresh, await self.ports.embedder.embed([items[i].text for i in fresh]), strict=True)
        )
        derived = await self._derived(items, fresh)
        affects = await self._affects(items, fresh)
        twins = await self.twins.nearest(
            tenant, {i: _owner_fields(items[i]) for i in fresh}, vectors, derived.figures
        )
        return _Fresh(vectors, derived, affects, twins)

    def _new_memories(
        self,
        tenant: str,
        items: list[MemoryIn],
        ids: list[str | None],
        fresh: _Fresh,
        decisions: list[WriteDecision],
        now: datetime,
        salience: dict[int, float],
    ) -> dict[int, NewMemory]:
        """The memory each item that may be created would become (`WriteBatch.new`)."""
        seq_base = time.time_ns() // 1000 * 1000  # room for 1,000 items per microsecond
        return {
            i: NewMemory(
                self._record(
                    tenant,
                    items[i],
                    fresh.derived.figures[i],
                    now,
                    seq_base + i,
                    fresh.affects.get(i),
                    memory_id=ids[i],
                    inferred=fresh.derived.tiers.get(i),
                    salience=salience.get(i),
                ),
                vec,
                fresh.derived.sparse[i],
            )
            for i, vec in fresh.vectors.items()
            if decisions[i].first is None
        }

    async def _derived(self, items: list[MemoryIn], fresh: list[int]) -> Derived:
        """What the new items' texts imply (`Derived`): for a request with much text in a
        worker process (in a thread it would hold the interpreter lock while other tenants'
        requests wait: docs/decisions/0039-firewall-worker-processes.md), here for a small
        one."""
        texts = [items[i].text for i in fresh]
        infer = [self.settings.infer_importance and items[i].importance is None for i in fresh]
        return await self.screens.derive(fresh, texts, infer)

    async def _affects(self, items: list[MemoryIn], fresh: list[int]) -> dict[int, Affect]:
        """Affect tags of the new items, in a worker thread: VADER is pure Python (~0.1 ms a
        short text), and a 1,000-item batch should not hold the event loop for it."""
        if not self.settings.affect_tags or not fresh:
            return {}
        tags = await asyncio.to_thread(lambda: [classify(items[i].text) for i in fresh])
        return dict(zip(fresh, tags, strict=True))

    def _record(
        self,
        tenant: str,
        item: MemoryIn,
        figures: list[str],
        now: datetime,
        seq: int,
        affect: Affect | None = None,
        memory_id: str | None = None,
        inferred: str | None = None,
        salience: float | None = None,
    ) -> MemoryRecord:
        created = as_utc(item.created_at) if item.created_at else now
        importance = item.importance or Importance(inferred or Importance.NORMAL.value)
        s_ref = initial_strength(importance.value, item.pinned)
        if salience is not None and not item.pinned:  # a kept capture: as salient, as strong
            s_ref = sal.strength_with(s_ref, salience, self.settings.capture_salience_threshold)
        return MemoryRecord(
            id=memory_id or str(uuid.uuid4()),
            tenant=tenant,
            user_id=item.user_id,
            scope=item.scope,
            workspace=item.workspace or "",
            project=item.project or "",
            text=item.text,
            text_hash=text_hash(item.text),
            figures=figures,
            created_at=created,
            ingested_at=now,
            seq=seq,
            importance=importance,
            pinned=item.pinned,
            strength=Strength(s_ref=s_ref, t_ref=created),
            episode=item.episode,
            source=item.source,
            affect=affect or Affect(),
            graph=GraphInfo(),
            metadata=item.metadata,
            salience=salience,
        )

    async def _by_hashes(
        self, tenant: str, hashes: list[str]
    ) -> dict[tuple[str, str, str, str, str], ScoredPoint]:
        """Stored memories with any of these text hashes, by (hash, scope, workspace,
        project, user): one filtered scroll for the whole batch instead of one per item. The
        first in scroll order wins, as a single lookup with limit 1 would give."""
        found: dict[tuple[str, str, str, str, str], ScoredPoint] = {}
        wanted = sorted(set(hashes))
        if not wanted:
            return found
        # A distilled fact (derived) is no stored copy of a raw statement.
        flt = Filter(must={"text_hash": wanted}, must_not={"state": "superseded", "kind": "fact"})
        offset: str | None = None
        while True:
            page, offset = await self.ports.vectors.scroll(
                tenant, flt=flt, limit=max(64, len(wanted)), offset=offset
            )
            for p in page:
                key = (str(p.payload.get("text_hash", "")), *visibility.owner(p.payload))
                found.setdefault(key, p)
            if offset is None:
                return found


__all__ = ["IngestService", "Scope", "present"]
