"""Write path: validation is done by the schemas; here duplicates, embedding, upsert, events."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import datetime
from typing import Any

from pcm_common.domain.consolidation import GroupKey, record_id
from pcm_common.domain.figures import extract_figures, same_figures
from pcm_common.domain.importance import infer_importance
from pcm_common.domain.memory import (
    GraphInfo,
    Importance,
    MemoryRecord,
    Scope,
    Source,
    State,
    Strength,
    as_utc,
    text_hash,
    utcnow,
)
from pcm_common.domain.strength import decayed, initial_strength
from pcm_common.domain.surprisal import distinct_events
from pcm_common.events import STREAM_CHANGED, STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.judge.features import FEATURES_FIELD
from pcm_common.models.sparse import encode_document
from pcm_common.resources import TENANTS_KEY, Resources
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery, VectorPoint
from pcm_common.telemetry import MEMORIES_WRITTEN, get_logger
from pcm_ingest.episodes import EpisodeAssigner
from pcm_ingest.firewall import SecretDetected, WriteFirewall
from pcm_ingest.schemas import MemoryIn, MemoryPatch, StoreResult
from pcm_ingest.settings import IngestSettings

log = get_logger("ingest")


def scope_filter(item: MemoryIn) -> dict[str, Any]:
    """Duplicates are only duplicates within the same scope (a project fact stays its own)
    and of the same user: one user's repeat must not land in another user's memory, which
    the first user's recall would never see."""
    return {
        "scope": item.scope.value,
        "workspace": item.workspace or "",
        "project": item.project or "",
        "user_id": item.user_id,  # None matches memories without a user
    }


def _scope_key(fields: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(fields.get("scope") or ""),
        str(fields.get("workspace") or ""),
        str(fields.get("project") or ""),
        str(fields.get("user_id") or ""),
    )


# What `_twin` reads of the nearest stored memory: whole payloads (~30 fields turned into
# Python objects) for one hit per new memory, when nearly none is a twin.
_TWIN_FIELDS = ("figures", "text")
# What names a memory's episode group (`domain.consolidation.GroupKey`).
_GROUP_FIELDS = ("episode", "user_id", "scope", "workspace", "project", "source")


class IngestService:
    def __init__(self, res: Resources, settings: IngestSettings) -> None:
        self.res = res
        self.settings = settings
        self.firewall = WriteFirewall(
            settings.firewall_secrets,
            settings.firewall_pii,
            settings.firewall_phone_regions,
        )
        self.episodes = (
            EpisodeAssigner(res.redis, settings.auto_episode_gap_min * 60.0)
            if settings.auto_episodes
            else None
        )

    async def screen(self, tenant: str, items: list[MemoryIn]) -> tuple[list[MemoryIn], set[int]]:
        """The items as the firewall lets them be stored, and which of them it redacted;
        raises `SecretDetected` (nothing stored) for a blocked text, or a blocked finding
        in the metadata (which is never rewritten). One worker-thread call for the batch:
        ~0.45 ms a text."""
        with_meta = [i for i, item in enumerate(items) if item.metadata]
        texts = [item.text for item in items] + [
            json.dumps(items[i].metadata, default=str) for i in with_meta
        ]
        every = await asyncio.to_thread(self.firewall.screen_many, texts)
        screened, metas = every[: len(items)], every[len(items) :]
        bad = [
            {"index": i, "kinds": s.blocked_kinds} for i, s in enumerate(screened) if s.blocked
        ] + [
            {"index": i, "field": "metadata", "kinds": s.blocked_kinds}
            for i, s in zip(with_meta, metas, strict=True)
            if s.blocked
        ]
        if bad:
            log.info("write_blocked", tenant=tenant, items=bad)
            raise SecretDetected(bad)
        redacted = {i for i, s in enumerate(screened) if s.redacted}
        out = [
            item.model_copy(update={"text": screened[i].text}) if i in redacted else item
            for i, item in enumerate(items)
        ]
        for i in redacted:
            log.info(
                "memory_redacted",
                tenant=tenant,
                index=i,
                kinds=screened[i].redacted_kinds,
            )
        return out, redacted

    async def store(self, tenant: str, items: list[MemoryIn]) -> list[StoreResult]:
        now = utcnow()
        items, redacted = await self.screen(tenant, items)
        await self.res.redis.sadd(TENANTS_KEY, tenant)
        results: list[StoreResult | None] = [None] * len(items)
        fresh: list[int] = []
        seen: dict[str, int] = {}  # text hash -> first index in this batch
        dup_of: dict[int, int] = {}  # later exact copy in the batch -> its first index
        hashes = [text_hash(item.text) for item in items]
        stored = await self._by_hashes(tenant, hashes)
        for i, (item, h) in enumerate(zip(items, hashes, strict=True)):
            existing = stored.get((h, *_scope_key(scope_filter(item))))
            if existing is not None:
                await self._reinforce(tenant, existing, as_utc(item.created_at or now))
                results[i] = StoreResult(id=existing.id, status="reinforced")
            elif h in seen:
                dup_of[i] = seen[h]
            else:
                seen[h] = i
                fresh.append(i)

        vectors = await self.res.embedder.embed([items[i].text for i in fresh])
        seq_base = time.time_ns() // 1000 * 1000  # room for 1,000 items per microsecond
        records: list[MemoryRecord] = []
        vectors_of: dict[str, list[float]] = {}
        figures_of = {i: extract_figures(items[i].text) for i in fresh}
        twins = await self._near_duplicates(tenant, items, fresh, vectors, figures_of)
        for i, vec, twin in zip(fresh, vectors, twins, strict=True):
            item = items[i]
            figures = figures_of[i]
            # The search read two fields of the twin; the whole record is read here (its
            # latest state too, when this batch reinforced it already). Deleted meanwhile:
            # this memory is stored as new.
            found = await self.res.vectors.get(tenant, [twin.id]) if twin is not None else []
            if found:
                await self._reinforce(tenant, found[0], as_utc(item.created_at or now))
                results[i] = StoreResult(id=found[0].id, status="merged")
                continue
            record = self._record(tenant, item, figures, now, seq_base + i)
            records.append(record)
            vectors_of[record.id] = vec
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
                sparse=encode_document(r.text),
            )
            for r in records
        ]
        if points:
            await self.res.vectors.upsert(points)
            # Published after the upsert is durable; a crash between the two leaves a memory
            # without downstream work, which the sweeper's repair job re-publishes.
            await self.res.bus.publish_many(STREAM_WRITTEN, [MemoryWritten.of(r) for r in records])
            pinned = [
                MemoryChanged(tenant=tenant, memory_id=r.id, change="pinned")
                for r in records
                if r.pinned
            ]
            if pinned:  # recall replicas drop their pinned cache for this tenant
                await self.res.bus.publish_many(STREAM_CHANGED, pinned)
        # Exact copies inside the batch reinforce the stored memory once it exists, each
        # remembered as a repeat at its own time.
        for i, first in dup_of.items():
            first_result = results[first]
            assert first_result is not None
            again = await self.res.vectors.get(tenant, [first_result.id])
            if again:
                await self._reinforce(tenant, again[0], as_utc(items[i].created_at or now))
            results[i] = StoreResult(id=first_result.id, status="reinforced")
        for r in results:
            assert r is not None
            MEMORIES_WRITTEN.labels(r.status).inc()
            log.info("memory_stored", tenant=tenant, memory_id=r.id, status=r.status)
        return [r for r in results if r is not None]

    def _record(
        self, tenant: str, item: MemoryIn, figures: list[str], now: datetime, seq: int
    ) -> MemoryRecord:
        created = as_utc(item.created_at) if item.created_at else now
        importance = item.importance or (
            Importance(infer_importance(item.text))
            if self.settings.infer_importance
            else Importance.NORMAL
        )
        return MemoryRecord(
            id=str(uuid.uuid4()),
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
                key = (str(p.payload.get("text_hash", "")), *_scope_key(p.payload))
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
        """The stored twin of each new item (or None): the nearest active memory of its
        scope and user, all looked up as one batch of searches (one call into the store
        instead of one worker-thread hop each)."""
        queries = [
            SearchQuery(
                tenant, vec, limit=1, flt=Filter(must={"state": "active", **scope_filter(items[i])})
            )
            for i, vec in zip(fresh, vectors, strict=True)
        ]
        found = await self.res.vectors.search_many(
            queries, fields=_TWIN_FIELDS, concurrency=self.settings.near_duplicate_lookups
        )
        return [
            self._twin(items[i], figures_of[i], hits) for i, hits in zip(fresh, found, strict=True)
        ]

    def _twin(
        self, item: MemoryIn, figures: list[str], hits: list[ScoredPoint]
    ) -> ScoredPoint | None:
        """The nearest hit when it is the same event as `item`: cos >= the near-duplicate
        threshold, the same figures, no other name or added clause."""
        if not hits or hits[0].score < self.settings.near_duplicate_cos:
            return None
        if not same_figures(hits[0].payload.get("figures", []), figures):
            return None
        if distinct_events(hits[0].payload.get("text", ""), item.text):
            return None  # another name or an added clause: a different event, keep both
        return hits[0]

    async def _reinforce(self, tenant: str, point: ScoredPoint, at: datetime) -> None:
        """A repeat strengthens the memory and is remembered; the original date stays."""
        rec = MemoryRecord.from_payload(point.payload)
        strength = rec.strength.reinforced(at)
        at = max(at, rec.strength.t_ref)
        repeats = [*rec.repeats, at]
        # A repeat of an archived memory reactivates it (strength.reactivates).
        patch = {**rec.strength_patch(strength, at), "repeats": [d.isoformat() for d in repeats]}
        await self.res.vectors.set_payload(tenant, rec.id, patch)
        if "state" in patch:
            await self.res.bus.publish(
                STREAM_CHANGED,
                MemoryChanged(tenant=tenant, memory_id=rec.id, change="reactivated"),
            )
        # The sweeper adds the repeat to the memory's routine (absence flags count it).
        await self.res.bus.publish(
            STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=rec.id, change="repeated")
        )

    # ---- read / update / delete -------------------------------------------------------

    async def get(self, tenant: str, memory_id: str) -> dict[str, Any] | None:
        found = await self.res.vectors.get(tenant, [memory_id])
        return present(found[0].payload) if found else None

    async def list(
        self, tenant: str, flt: Filter, limit: int, offset: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        points, nxt = await self.res.vectors.scroll(tenant, flt=flt, limit=limit, offset=offset)
        return [present(p.payload) for p in points], nxt

    async def patch(self, tenant: str, memory_id: str, patch: MemoryPatch) -> dict[str, Any] | None:
        found = await self.res.vectors.get(tenant, [memory_id])
        if not found:
            return None
        rec = MemoryRecord.from_payload(found[0].payload)
        now = utcnow()
        history = list(found[0].payload.get("history", []))
        changes: dict[str, Any] = {}
        change_kind = "updated"
        if patch.text is not None or patch.metadata:
            # The same screen as a write: the new text, and the new metadata (secrets).
            # (A placeholder when the text stays: the stored one was screened already.)
            probe = MemoryIn(text=patch.text or "-", metadata=patch.metadata or {})
            (checked,), _ = await self.screen(tenant, [probe])
            if patch.text is not None:
                patch = patch.model_copy(update={"text": checked.text})
        if patch.text is not None and patch.text != rec.text:
            history.append(
                {"version": rec.version, "text": rec.text, "changed_at": now.isoformat()}
            )
            rec.text, rec.text_hash = patch.text, text_hash(patch.text)
            rec.figures = extract_figures(patch.text)
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
        if rec.version != found[0].payload.get("version"):
            vec = await self.res.embedder.embed_one(rec.text)
            await self.res.vectors.upsert(
                [
                    VectorPoint(
                        id=rec.id, vector=vec, payload=changes, sparse=encode_document(rec.text)
                    )
                ]
            )
            await self.res.bus.publish(STREAM_WRITTEN, MemoryWritten.of(rec))
            await self._drop_episode_record(tenant, rec.id, changes)
        else:
            await self.res.vectors.set_payload(tenant, rec.id, changes)
        await self.res.bus.publish(
            STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=rec.id, change=change_kind)
        )
        log.info("memory_patched", tenant=tenant, memory_id=rec.id, change=change_kind)
        return present(changes)

    async def delete(self, tenant: str, memory_id: str) -> bool:
        found = await self.res.vectors.get(
            tenant, [memory_id], fields=(*_GROUP_FIELDS, "supersedes", "superseded_by", "state")
        )
        deleted = await self.res.vectors.delete(tenant, [memory_id])
        if not deleted:
            return False
        await self.res.bus.publish(
            STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=memory_id, change="deleted")
        )
        log.info("memory_deleted", tenant=tenant, memory_id=memory_id)
        if found:
            await self._drop_episode_record(tenant, memory_id, found[0].payload)
            await self._restore_superseded(tenant, memory_id, found[0].payload)
        return True

    async def _restore_superseded(
        self, tenant: str, memory_id: str, payload: dict[str, Any]
    ) -> None:
        """Deleting the memory that superseded another makes that one current again, unless
        the deleted one was itself superseded: then the chain closes over the gap (A, B
        superseded by C, B deleted: A is superseded by C)."""
        old = payload.get("supersedes")
        if not old:
            return
        prev = await self.res.vectors.get(tenant, [str(old)], fields=("state", "superseded_by"))
        if not prev or prev[0].payload.get("superseded_by") != memory_id:
            return
        if prev[0].payload.get("state") != State.SUPERSEDED.value:
            return
        newer = payload.get("superseded_by")
        if payload.get("state") == State.SUPERSEDED.value and newer:
            await self.res.vectors.set_payload_many(
                tenant, [(str(old), {"superseded_by": newer}), (str(newer), {"supersedes": old})]
            )
            log.info("supersession_relinked", tenant=tenant, memory_id=str(old), by=newer)
            return
        await self.res.vectors.set_payload(
            tenant, str(old), {"state": State.ACTIVE.value, "superseded_by": None}
        )
        await self.res.bus.publish(
            STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=str(old), change="updated")
        )
        log.info("memory_restored", tenant=tenant, memory_id=str(old), deleted=memory_id)

    async def _drop_episode_record(
        self, tenant: str, memory_id: str, payload: dict[str, Any]
    ) -> None:
        """Delete the episode record that quotes this memory, so a deleted or rewritten text
        does not live on in it until the next consolidation run; that run rebuilds the
        record from the sources left (with the new text), once the episode qualifies."""
        if not payload.get("episode") or payload.get("source") == Source.CONSOLIDATION.value:
            return
        key = GroupKey(
            episode=str(payload["episode"]),
            user_id=payload.get("user_id"),
            scope=str(payload.get("scope") or Scope.GLOBAL.value),
            workspace=payload.get("workspace") or "",
            project=payload.get("project") or "",
        )
        rid = record_id(tenant, key)
        found = await self.res.vectors.get(tenant, [rid], fields=["metadata"])
        if not found or memory_id not in (found[0].payload.get("metadata") or {}).get(
            "sources", []
        ):
            return
        if await self.res.vectors.delete(tenant, [rid]):
            await self.res.bus.publish(
                STREAM_CHANGED, MemoryChanged(tenant=tenant, memory_id=rid, change="deleted")
            )
            log.info("episode_record_dropped", tenant=tenant, memory_id=rid, source_id=memory_id)


# Payload fields for the services' own use: not part of a memory's public view.
_INTERNAL_FIELDS = frozenset({"created_ts", FEATURES_FIELD})


def present(payload: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The public view of a record: payload plus its current (lazily decayed) strength."""
    out = {k: v for k, v in payload.items() if k not in _INTERNAL_FIELDS}
    rec = MemoryRecord.from_payload(payload)
    st = rec.strength
    out["current_strength"] = round(
        decayed(st.s_ref, st.t_ref, st.n, now or utcnow(), rec.pinned), 6
    )
    return out


__all__ = ["IngestService", "Scope", "present"]
