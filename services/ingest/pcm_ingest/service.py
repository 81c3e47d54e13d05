"""Write path: validation is done by the schemas; here duplicates, embedding, upsert, events."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pcm_common.domain import visibility
from pcm_common.domain.capture import predictable
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.domain.figures import FIGURES_KEY, extract_figures, figures_key, same_figures
from pcm_common.domain.governance import admits, effective, is_automatic
from pcm_common.domain.importance import infer_importance
from pcm_common.domain.memory import (
    DERIVED_FIELDS,
    Affect,
    GraphInfo,
    Importance,
    MemoryRecord,
    Scope,
    Source,
    State,
    Strength,
    text_hash,
)
from pcm_common.domain.strength import initial_strength
from pcm_common.domain.surprisal import distinct_events
from pcm_common.events import STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.forgetting import Forgetter
from pcm_common.judge.features import FEATURES_FIELD
from pcm_common.keylocks import KeyLocks
from pcm_common.models.affect import classify
from pcm_common.models.sparse import encode_document
from pcm_common.outbox import cross_out, note, owe, pay
from pcm_common.resources import TENANTS_KEY, Resources
from pcm_common.stores.governance import GovernanceStore
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery, SparseVec, VectorPoint
from pcm_common.telemetry import MEMORIES_WRITTEN, get_logger
from pcm_ingest.batch_twins import earlier_twins
from pcm_ingest.episodes import EpisodeAssigner
from pcm_ingest.firewall import SecretDetected, WriteFirewall
from pcm_ingest.firewall.runner import ScreenRunner
from pcm_ingest.idempotency import IdempotencyKeys, WritePlan
from pcm_ingest.schemas import MemoryIn, MemoryPatch, StoreResult
from pcm_ingest.settings import IngestSettings

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
class _Derived:
    """Per new item (by its index in the request): the figures it states, the importance
    tier its text implies (where the write gave none and inference is on), its sparse
    lexical vector."""

    figures: dict[int, list[str]]
    tiers: dict[int, str]
    sparse: dict[int, SparseVec]


def _derive(fresh: list[int], texts: list[str], infer: list[bool]) -> _Derived:
    return _Derived(
        figures={i: extract_figures(t) for i, t in zip(fresh, texts, strict=True)},
        tiers={i: infer_importance(t) for i, t, on in zip(fresh, texts, infer, strict=True) if on},
        sparse={i: encode_document(t) for i, t in zip(fresh, texts, strict=True)},
    )


# What `_twin` reads of the near-duplicate search's hits: whole payloads (~30 fields turned
# into Python objects) for hits that are nearly never a twin.
_TWIN_FIELDS = ("figures", "text")
# Hits asked of the near-duplicate search: room for memories stored before `figures_key`
# existed, which match whatever their figures.
_TWIN_HITS = 4


class IngestService:
    def __init__(self, res: Resources, settings: IngestSettings) -> None:
        self.res = res
        self.settings = settings
        self.locks = KeyLocks(res.redis)
        self.firewall = WriteFirewall(
            settings.firewall_secrets,
            settings.firewall_pii,
            settings.firewall_phone_regions,
        )
        self.screens = ScreenRunner(
            self.firewall,
            process_chars=settings.firewall_process_chars,
            workers=settings.firewall_workers,
            deadline_s=settings.firewall_deadline_s,
        )
        self.episodes = (
            EpisodeAssigner(res.redis, settings.auto_episode_gap_min * 60.0)
            if settings.auto_episodes
            else None
        )
        self.governance = GovernanceStore(res.redis)
        self.forgetter = Forgetter(res)
        self.idempotency = IdempotencyKeys(res.redis)

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
        ids = [plan.memory_id(tenant, i) if plan else None for i in range(len(items))]
        if not skipped:
            return await self._store(tenant, items, ids, plan)
        kept = [i for i in range(len(items)) if i not in skipped]
        out = [
            StoreResult(id=None, status="skipped", reason=skipped[i]) if i in skipped else None
            for i in range(len(items))
        ]
        if kept:
            try:
                stored = await self._store(
                    tenant, [items[i] for i in kept], [ids[i] for i in kept], plan
                )
            except SecretDetected as exc:  # name the items by their place in the request
                for bad in exc.items:
                    bad["index"] = kept[int(str(bad["index"]))]
                raise
            for i, result in zip(kept, stored, strict=True):
                out[i] = result
        for r in out:
            if r is not None and r.status == "skipped":
                MEMORIES_WRITTEN.labels(r.status).inc()
        return [r for r in out if r is not None]

    async def _store(
        self,
        tenant: str,
        items: list[MemoryIn],
        ids: list[str | None],
        plan: WritePlan | None,
    ) -> list[StoreResult]:
        items, redacted = await self.screen(tenant, items)
        await self.res.redis.sadd(TENANTS_KEY, tenant)
        # (text hash, scope, workspace, project, user): a copy is a repeat in the same scope
        # and of the same user only. Each is locked from the lookup of a stored copy until
        # this request stored or reinforced it (`keylocks`: parallel copies made two).
        keys = [(text_hash(item.text), *visibility.owner(_owner_fields(item))) for item in items]
        async with self.locks.hold(f"copy:{tenant}:{'|'.join(k)}" for k in keys):
            return await self._store_screened(tenant, items, redacted, keys, ids, plan)

    async def _store_screened(
        self,
        tenant: str,
        items: list[MemoryIn],
        redacted: set[int],
        keys: list[tuple[str, str, str, str, str]],
        ids: list[str | None],
        plan: WritePlan | None,
    ) -> list[StoreResult]:
        now = plan.now if plan else utcnow()
        once = plan is not None and plan.replay  # repeats the first try recorded stay one
        owed: list[MemoryRecord] = []  # stored by a try that left no answer: events again
        results: list[StoreResult | None] = [None] * len(items)
        fresh: list[int] = []
        seen: dict[tuple[str, str, str, str, str], int] = {}  # key -> first index in batch
        dup_of: dict[int, int] = {}  # later exact copy in the batch -> its first index
        stored = await self._by_hashes(tenant, [k[0] for k in keys])
        repeated: set[tuple[str, str, str, str, str]] = set()
        for i, (item, key) in enumerate(zip(items, keys, strict=True)):
            existing = stored.get(key)
            if existing is not None and existing.id == ids[i]:
                owed.append(MemoryRecord.from_payload(existing.payload))
                results[i] = StoreResult(
                    id=existing.id, status="redacted" if i in redacted else "created"
                )
            elif existing is not None:
                if key in repeated:  # a second copy in this batch: read its latest repeats
                    existing = (await self.res.vectors.get(tenant, [existing.id]) or [existing])[0]
                await self._reinforce(tenant, existing, as_utc(item.created_at or now), once)
                repeated.add(key)
                results[i] = StoreResult(id=existing.id, status="reinforced")
            elif key in seen:
                dup_of[i] = seen[key]
            else:
                seen[key] = i
                fresh.append(i)

        vectors = await self.res.embedder.embed([items[i].text for i in fresh])
        seq_base = time.time_ns() // 1000 * 1000  # room for 1,000 items per microsecond
        records: list[MemoryRecord] = []
        vectors_of: dict[str, list[float]] = {}
        sparse_of: dict[str, SparseVec] = {}
        derived = await self._derived(items, fresh)
        figures_of = derived.figures
        affect_of = await self._affects(items, fresh)
        twins = await self._near_duplicates(tenant, items, fresh, vectors, figures_of)
        # Of the rest, a near-duplicate of an earlier one in this request is merged into it
        # once that one is stored, as if they had come one at a time.
        alone = [n for n, twin in enumerate(twins) if twin is None]
        repeats = earlier_twins(
            [
                (
                    visibility.owner(_owner_fields(items[fresh[n]])),
                    figures_key(figures_of[fresh[n]]),
                )
                for n in alone
            ],
            [vectors[n] for n in alone],
            [items[fresh[n]].text for n in alone],
            self.settings.near_duplicate_cos,
        )
        merged_into = {fresh[alone[a]]: fresh[alone[b]] for a, b in repeats.items()}
        for i, vec, twin in zip(fresh, vectors, twins, strict=True):
            if i in merged_into:
                continue
            item = items[i]
            figures = figures_of[i]
            # The search read two fields of the twin; the whole record is read here (its
            # latest state too, when this batch reinforced it already). Deleted meanwhile:
            # this memory is stored as new.
            found = await self.res.vectors.get(tenant, [twin.id]) if twin is not None else []
            if found:
                await self._reinforce(tenant, found[0], as_utc(item.created_at or now), once)
                results[i] = StoreResult(id=found[0].id, status="merged")
                continue
            record = self._record(
                tenant,
                item,
                figures,
                now,
                seq_base + i,
                affect_of.get(i),
                memory_id=ids[i],
                inferred=derived.tiers.get(i),
            )
            records.append(record)
            vectors_of[record.id] = vec
            sparse_of[record.id] = derived.sparse[i]
            results[i] = StoreResult(
                id=record.id, status="redacted" if i in redacted else "created"
            )
        if self.episodes is not None:
            await self.episodes.assign(records)
        points = [
            VectorPoint(
                id=r.id,
                vector=vectors_of[r.id],
                payload=r.to_payload(),
                sparse=sparse_of[r.id],
            )
            for r in records
        ]
        # Pinned memories: recall replicas drop their pinned cache for this tenant.
        pinned = [
            MemoryChanged(tenant=tenant, memory_id=r.id, change="pinned")
            for r in records + owed
            if r.pinned
        ]
        if points:
            # Noted before the upsert, crossed out once published: a write whose publish
            # failed (Redis restarting) has its events sent by the sweeper within a minute.
            await note(self.res.redis, tenant, [r.id for r in records])
            await owe(self.res.redis, pinned)
            await self.res.vectors.upsert(points)
        await self._publish_written(tenant, records + owed, pinned)
        # Exact copies and near-duplicates inside the batch reinforce the stored memory once
        # it exists, each remembered as a repeat at its own time.
        later = [(i, first, "reinforced") for i, first in dup_of.items()]
        later += [(i, first, "merged") for i, first in merged_into.items()]
        for i, first, status in sorted(later):
            first_result = results[first]
            assert first_result is not None and first_result.id is not None
            again = await self.res.vectors.get(tenant, [first_result.id])
            if again:
                await self._reinforce(tenant, again[0], as_utc(items[i].created_at or now), once)
            results[i] = StoreResult(id=first_result.id, status=status)
        for r in results:
            assert r is not None
            MEMORIES_WRITTEN.labels(r.status).inc()
            log.info("memory_stored", tenant=tenant, memory_id=r.id, status=r.status)
        return [r for r in results if r is not None]

    async def _publish_written(
        self, tenant: str, records: list[MemoryRecord], pinned: list[MemoryChanged]
    ) -> None:
        """The new memories' events, published after the upsert is durable."""
        if not records:
            return
        await self.res.bus.publish_many(STREAM_WRITTEN, [MemoryWritten.of(r) for r in records])
        await cross_out(self.res.redis, tenant, [r.id for r in records])
        await pay(self.res, pinned)

    async def _derived(self, items: list[MemoryIn], fresh: list[int]) -> _Derived:
        """What the new items' texts imply (`_Derived`): in a worker thread for a request
        with much text, where the loop would otherwise wait for it (~50-100 ms for 100 kB,
        while other tenants' requests queue), here for a small one (a thread hop costs more
        than the work)."""
        texts = [items[i].text for i in fresh]
        infer = [self.settings.infer_importance and items[i].importance is None for i in fresh]
        if sum(map(len, texts)) >= self.settings.firewall_process_chars:
            return await asyncio.to_thread(_derive, fresh, texts, infer)
        return _derive(fresh, texts, infer)

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
    ) -> MemoryRecord:
        created = as_utc(item.created_at) if item.created_at else now
        importance = item.importance or Importance(inferred or Importance.NORMAL.value)
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
            strength=Strength(s_ref=initial_strength(importance.value, item.pinned), t_ref=created),
            episode=item.episode,
            source=item.source,
            affect=affect or Affect(),
            graph=GraphInfo(),
            metadata=item.metadata,
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
        flt = Filter(must={"text_hash": wanted}, must_not={"state": "superseded"})
        offset: str | None = None
        while True:
            page, offset = await self.res.vectors.scroll(
                tenant, flt=flt, limit=max(64, len(wanted)), offset=offset
            )
            for p in page:
                key = (str(p.payload.get("text_hash", "")), *visibility.owner(p.payload))
                found.setdefault(key, p)
            if offset is None:
                return found

    async def _near_duplicates(
        self,
        tenant: str,
        items: list[MemoryIn],
        fresh: list[int],
        vectors: list[list[float]],
        figures_of: dict[int, list[str]],
    ) -> list[ScoredPoint | None]:
        """The stored twin of each new item (or None): the nearest active or archived
        memory of its scope and user that states the same figures, at or above the
        near-duplicate threshold, all looked up as one batch of searches (one call into
        the store instead of one worker-thread hop each).

        The search filters on the figures' keyword (`figures_key`), so it scores only the
        memories that could be the same event: at 10k memories in one tenant 0.06-0.12
        against 0.46-0.48 ms a search over Qdrant Edge's unindexed segment, which holds
        the interpreter lock (docs/benchmarks.md, session 20). Memories stored before the
        keyword existed have none and stay candidates; when all the hits are such memories
        with other figures, the search is asked again of keyed memories alone."""
        cos = self.settings.near_duplicate_cos

        def query(i: int, vec: list[float], legacy: bool) -> SearchQuery:
            key = {FIGURES_KEY: figures_key(figures_of[i])}
            flt = Filter(
                # Archived too: a repeat of a demoted memory brings it back (as an exact
                # copy does), instead of storing the same event twice.
                must={"state": ["active", "archived"], **visibility.peers(_owner_fields(items[i]))},
                should=[key, {FIGURES_KEY: None}] if legacy else [key],
            )
            limit = _TWIN_HITS if legacy else 1
            return SearchQuery(tenant, vec, limit=limit, flt=flt, min_score=cos)

        found = await self.res.vectors.search_many(
            [query(i, vec, True) for i, vec in zip(fresh, vectors, strict=True)],
            fields=_TWIN_FIELDS,
            concurrency=self.settings.near_duplicate_lookups,
        )
        nearest: list[ScoredPoint | None] = []
        again: list[int] = []  # positions in `fresh` whose hits were all legacy ones
        for n, (i, hits) in enumerate(zip(fresh, found, strict=True)):
            same = next(
                (h for h in hits if same_figures(h.payload.get("figures", []), figures_of[i])),
                None,
            )
            nearest.append(same)
            if same is None and len(hits) >= _TWIN_HITS:
                again.append(n)
        if again:
            redone = await self.res.vectors.search_many(
                [query(fresh[n], vectors[n], False) for n in again],
                fields=_TWIN_FIELDS,
                concurrency=self.settings.near_duplicate_lookups,
            )
            for n, hits in zip(again, redone, strict=True):
                nearest[n] = hits[0] if hits else None
        return [self._twin(items[i], near) for i, near in zip(fresh, nearest, strict=True)]

    def _twin(self, item: MemoryIn, nearest: ScoredPoint | None) -> ScoredPoint | None:
        """The nearest hit with the same figures when it is the same event as `item`:
        cos >= the near-duplicate threshold, no other name or added clause."""
        if nearest is None or nearest.score < self.settings.near_duplicate_cos:
            return None
        if distinct_events(nearest.payload.get("text", ""), item.text):
            return None  # another name or an added clause: a different event, keep both
        return nearest

    async def _reinforce(
        self, tenant: str, point: ScoredPoint, at: datetime, once: bool = False
    ) -> None:
        """A repeat strengthens the memory and is remembered; the original date stays.
        `once`: a replayed write's repeat, skipped when the first try recorded it."""
        rec = MemoryRecord.from_payload(point.payload)
        strength = rec.strength.reinforced(at)
        at = max(at, rec.strength.t_ref)
        if once and at in rec.repeats:
            return
        repeats = [*rec.repeats, at]
        # A repeat of an archived memory reactivates it (strength.reactivates).
        patch = {**rec.strength_patch(strength, at), "repeats": [d.isoformat() for d in repeats]}
        # The sweeper adds the repeat to the memory's routine (absence flags count it).
        changes = [MemoryChanged(tenant=tenant, memory_id=rec.id, change="repeated")]
        if "state" in patch:
            changes.insert(0, MemoryChanged(tenant=tenant, memory_id=rec.id, change="reactivated"))
        await owe(self.res.redis, changes)
        await self.res.vectors.set_payload(tenant, rec.id, patch)
        await pay(self.res, changes)

    # ---- read / update / delete -------------------------------------------------------

    async def get(self, tenant: str, memory_id: str) -> dict[str, Any] | None:
        found = await self.res.vectors.get(tenant, [memory_id])
        return present(found[0].payload) if found else None

    async def list(
        self, tenant: str, flt: Filter, limit: int, offset: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        points, nxt = await self.res.vectors.scroll(tenant, flt=flt, limit=limit, offset=offset)
        return [present(p.payload) for p in points], nxt

    async def stats(self, tenant: str, where: dict[str, Any]) -> dict[str, Any]:
        """Counts by state and pinned among the memories matching `where`, and the
        episode records among them (counted apart: they are derived, not memories)."""
        records = {"source": Source.CONSOLIDATION.value}
        count = self.res.vectors.count
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
        async with self.locks.hold([f"memory:{tenant}:{memory_id}"]):
            return await self._patch(tenant, memory_id, patch)

    async def _patch(
        self, tenant: str, memory_id: str, patch: MemoryPatch
    ) -> dict[str, Any] | None:
        found = await self.res.vectors.get(tenant, [memory_id])
        if not found:
            return None
        rec = MemoryRecord.from_payload(found[0].payload)
        now = utcnow()
        history = list(found[0].payload.get("history", []))
        changes: dict[str, Any] = {}
        change_kind = "updated"
        if patch.text is not None or patch.metadata:
            # The same screen as a write: the new text and the new metadata. (A
            # placeholder when the text stays: the stored one was screened already.)
            probe = MemoryIn(text=patch.text or "-", metadata=patch.metadata or {})
            (checked,), _ = await self.screen(tenant, [probe])
            if patch.text is not None:
                patch = patch.model_copy(update={"text": checked.text})
            if patch.metadata:
                patch = patch.model_copy(update={"metadata": checked.metadata})
        if patch.text is not None and patch.text != rec.text:
            history.append(
                {"version": rec.version, "text": rec.text, "changed_at": now.isoformat()}
            )
            rec.text, rec.text_hash = patch.text, text_hash(patch.text)
            rec.figures = extract_figures(patch.text)
            if self.settings.affect_tags:
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
        changes = rec.to_payload()
        changes["history"] = history
        # Both events are owed before the store write (`pcm_common.outbox`).
        changed = [MemoryChanged(tenant=tenant, memory_id=rec.id, change=change_kind)]
        await owe(self.res.redis, changed)
        if rec.version != found[0].payload.get("version"):
            vec = await self.res.embedder.embed_one(rec.text)
            await note(self.res.redis, tenant, [rec.id])
            await self.res.vectors.upsert(
                [
                    VectorPoint(
                        id=rec.id, vector=vec, payload=changes, sparse=encode_document(rec.text)
                    )
                ]
            )
            changed += await self.forgetter.drop_episode_record(tenant, rec.id, changes)
            # (Every store change first: a publish that fails leaves events owed, not
            # changes undone.)
            await self.res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec))
            await cross_out(self.res.redis, tenant, [rec.id])
        else:
            await self.res.vectors.set_payload(tenant, rec.id, changes)
        await pay(self.res, changed)
        log.info("memory_patched", tenant=tenant, memory_id=rec.id, change=change_kind)
        return present(changes)

    async def delete(self, tenant: str, memory_id: str) -> bool:
        async with self.locks.hold([f"memory:{tenant}:{memory_id}"]):
            return await self.forgetter.forget(tenant, memory_id)


# Payload fields for the services' own use: not part of a memory's public view.
_INTERNAL_FIELDS = DERIVED_FIELDS | {FEATURES_FIELD}


def present(payload: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The public view of a record: payload plus its current (lazily decayed) strength."""
    out = {k: v for k, v in payload.items() if k not in _INTERNAL_FIELDS}
    rec = MemoryRecord.from_payload(payload)
    out["current_strength"] = round(rec.strength.at(now or utcnow(), rec.pinned), 6)
    return out


__all__ = ["IngestService", "Scope", "present"]
