"""The `consolidation` job (whitepaper §2.4, mnemos SleepDaemon): one episode record per
settled episode (`pcm_common.domain.consolidation`), then facts distilled from the settled
episodes and the captures the gate skipped (`pcm_sweeper.distil`). Sources are never
touched: raw memories stay, and demotion treats them as ever. Moved here from `jobs.py`,
which runs it under its lock like every job (scheduled hourly, on idle, by request: the
hooks' PreCompact and Stop)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from pcm_common.domain import affect
from pcm_common.domain import consolidation as cons
from pcm_common.domain.memory import (
    GraphInfo,
    Importance,
    MemoryRecord,
    Source,
    Strength,
    Surprisal,
    text_hash,
)
from pcm_common.messaging.events import MemoryChanged
from pcm_common.messaging.outbox import owe, pay
from pcm_common.models.sparse import encode_document
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import tombstones
from pcm_common.stores.vectors import ScoredPoint, VectorPoint
from pcm_sweeper.distil import Distiller, distiller_for
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper.consolidation")

_IMPORTANCE_ORDER = {Importance.LOW: 0, Importance.NORMAL: 1, Importance.HIGH: 2}


class Consolidation:
    def __init__(self, res: SweeperPorts, settings: SweeperSettings) -> None:
        self.res = res
        self.settings = settings
        self.distiller: Distiller | None = distiller_for(res, settings) if settings.distil else None

    async def run(self, tenant: str, now: datetime) -> int:
        """One episode record per qualifying episode (pcm_common.domain.consolidation):
        created, rewritten when its sources changed, removed when fewer than the minimum
        sources remain (a source was deleted or superseded). Sources are never touched."""
        s = self.settings
        groups, sources, records = await self._episode_groups(tenant)
        await self._mark_episode_records(tenant, records)
        changed = 0
        settled: dict[cons.GroupKey, list[cons.Member]] = {}
        wanted: set[str] = set()
        for key, members in groups.items():
            rid = cons.record_id(tenant, key)
            if len(members) >= s.consolidation_min_members:
                wanted.add(rid)  # keep an existing record while its episode is still growing
            if not cons.qualifies(
                members,
                now,
                min_members=s.consolidation_min_members,
                settle=timedelta(hours=s.consolidation_settle_h),
            ):
                continue
            settled[key] = members
            existing = records.get(rid)
            if existing is not None and cons.is_current(
                existing.payload.get("metadata", {}).get("sources"),
                existing.payload.get("text"),
                members,
            ):
                continue
            await self._write_record(tenant, rid, key, members, sources, existing, now)
            changed += 1
        changed += await self._drop_records(tenant, [rid for rid in records if rid not in wanted])
        if self.distiller is not None:  # facts from the settled episodes and skipped captures
            changed += await self.distiller.run(tenant, now, settled)
        return changed

    async def _mark_episode_records(self, tenant: str, records: dict[str, ScoredPoint]) -> None:
        """Episode records written before records had a `kind` get theirs: recall tells
        them from distilled facts by it."""
        legacy = [
            (rid, {"kind": "episode"}) for rid, p in records.items() if not p.payload.get("kind")
        ]
        if legacy:
            await self.res.vectors.set_payload_many(tenant, legacy)

    async def _episode_groups(
        self, tenant: str
    ) -> tuple[
        dict[cons.GroupKey, list[cons.Member]], dict[str, MemoryRecord], dict[str, ScoredPoint]
    ]:
        """The tenant's consolidation candidates grouped by episode and owner, the candidate
        records by id, and the existing episode records by id."""
        groups: dict[cons.GroupKey, list[cons.Member]] = defaultdict(list)
        sources: dict[str, MemoryRecord] = {}
        records: dict[str, ScoredPoint] = {}
        async for points in self.res.vectors.pages(tenant):
            for p in points:
                rec = MemoryRecord.from_payload(p.payload)
                if rec.source == Source.CONSOLIDATION:
                    if rec.kind != "fact":  # distilled facts are pcm_sweeper.distil's
                        records[p.id] = p
                    continue
                if not cons.is_candidate(
                    source=rec.source.value,
                    state=rec.state.value,
                    pinned=rec.pinned,
                    episode=rec.episode,
                ):
                    continue
                assert rec.episode is not None
                key = cons.GroupKey(
                    episode=rec.episode,
                    user_id=rec.user_id,
                    scope=rec.scope.value,
                    workspace=rec.workspace or "",
                    project=rec.project or "",
                )
                groups[key].append(cons.Member(id=rec.id, text=rec.text, created_at=rec.created_at))
                sources[rec.id] = rec
        return groups, sources, records

    async def _drop_records(self, tenant: str, stale: list[str]) -> int:
        """Episode records no episode wants any more, deleted (tombstoned, and announced
        through the outbox); how many."""
        if not stale:
            return 0
        await tombstones.record(self.res.redis, tenant, stale)
        gone = [MemoryChanged(tenant=tenant, memory_id=rid, change="deleted") for rid in stale]
        await owe(self.res.redis, gone)  # made up for if the publish fails (outbox)
        await self.res.vectors.delete(tenant, stale)
        await pay(self.res, gone)
        return len(stale)

    async def _write_record(
        self,
        tenant: str,
        rid: str,
        key: cons.GroupKey,
        members: list[cons.Member],
        sources: dict[str, MemoryRecord],
        existing: ScoredPoint | None,
        now: datetime,
    ) -> None:
        text = cons.render(members)
        ids = cons.source_ids(members)
        recs = [sources[i] for i in ids]
        if existing is not None:
            # The record has its own life (recalls reinforced it): only its content changes.
            rec = MemoryRecord.from_payload(existing.payload)
            rec.version += 1
        else:
            rec = MemoryRecord(
                id=rid,
                tenant=tenant,
                user_id=key.user_id,
                scope=recs[0].scope,
                workspace=key.workspace,
                project=key.project,
                text=text,
                text_hash=text_hash(text),
                created_at=cons.first_created(members),
                ingested_at=now,
                strength=self._initial_strength(recs, now),
                episode=key.episode,
                source=Source.CONSOLIDATION,
                kind="episode",
            )
        _fill_record(rec, text, members, recs, ids, now)
        vec = await self.res.embedder.embed_one(text)
        await self.res.vectors.upsert(
            [
                VectorPoint(
                    id=rid, vector=vec, payload=rec.to_payload(), sparse=encode_document(text)
                )
            ]
        )
        log.info(
            "episode_consolidated",
            tenant=tenant,
            memory_id=rid,
            episode=key.episode,
            sources=len(ids),
            version=rec.version,
        )

    @staticmethod
    def _initial_strength(recs: list[MemoryRecord], now: datetime) -> Strength:
        """As strong as its strongest source is now, with its savings (n)."""
        current = [r.strength.at(now) for r in recs]
        recalled = [r.strength.last_recalled_at for r in recs if r.strength.last_recalled_at]
        return Strength(
            s_ref=max(current),
            t_ref=now,
            n=max(r.strength.n for r in recs),
            last_recalled_at=max(recalled) if recalled else None,
        )


def _fill_record(
    rec: MemoryRecord,
    text: str,
    members: list[cons.Member],
    recs: list[MemoryRecord],
    ids: list[str],
    now: datetime,
) -> None:
    """An episode record's content from its sources (`recs`, whose ids are `ids`)."""
    rec.text, rec.text_hash = text, text_hash(text)
    rec.created_at = cons.first_created(members)
    rec.importance = max((r.importance for r in recs), key=_IMPORTANCE_ORDER.__getitem__)
    rec.figures = list(dict.fromkeys(f for r in recs for f in r.figures))
    rec.affect = affect.blend([r.affect for r in recs])
    rec.metadata = {**rec.metadata, "sources": ids, "consolidated_at": now.isoformat()}
    # A derived record: the graph already holds its sources' facts, and surprisal is
    # judged per source, so neither stage should process (or repair) it.
    rec.graph = GraphInfo(
        extracted=True,
        entities=sorted({e for r in recs for e in r.graph.entities}),
        extracted_at=now,
    )
    rec.surprisal = Surprisal(judged_at=now)
