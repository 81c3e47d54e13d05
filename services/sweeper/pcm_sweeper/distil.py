"""Sleep consolidation that distils (mnemos SleepDaemon; issue 36, item 5): part of the
`consolidation` job. Facts (`pcm_common.domain.distil`) are drawn from each settled
episode (one that qualifies for an episode record) once per set of members, and from the
captures the gate skipped (`stores.redis.capture_buffer`, emptied as they are read),
group by group of one owner, by the configured `FactSource` (an LLM, or the graph
extractor's relations). Each fact is stored as a memory of its owner, deduplicated and
superseded (`domain.distil`); its sources change only when one is deleted
(`pcm_common.data.derived_facts`), and demotion treats facts as it treats any memory. A
source deleted while this job ran (it carries a tombstone) is not written into a fact.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from pcm_common.domain import consolidation as cons
from pcm_common.domain import distil, supersession, visibility
from pcm_common.domain.memory import GraphInfo, MemoryRecord, Scope, Source, Strength, Surprisal
from pcm_common.domain.memory import text_hash as hash_of
from pcm_common.domain.strength import initial_strength
from pcm_common.extract import Extractor
from pcm_common.extract.facts import FactSource, LlmFacts, RelationFacts
from pcm_common.messaging import outbox
from pcm_common.messaging.events import MemoryChanged
from pcm_common.models.sparse import encode_document
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.capture_buffer import Buffered, CaptureBuffer
from pcm_common.stores.redis.tombstones import deleted as tombstoned
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorPoint
from pcm_sweeper.settings import SweeperSettings

log = get_logger("sweeper.distil")

Owner = tuple[str, str, str, str]  # visibility.owner: (user, scope, workspace, project)


def _owner_of(key: cons.GroupKey) -> Owner:
    return visibility.owner(
        {
            "user_id": key.user_id,
            "scope": key.scope,
            "workspace": key.workspace,
            "project": key.project,
        }
    )


def _owner_fields(owner: Owner) -> dict[str, str | None]:
    user, scope, workspace, project = owner
    return {"user_id": user or None, "scope": scope, "workspace": workspace, "project": project}


def _digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(sorted(ids)).encode()).hexdigest()[:24]


class Distiller:
    def __init__(
        self,
        res: SweeperPorts,
        facts: Callable[[], FactSource],
        buffer: CaptureBuffer,
        *,
        duplicate_cos: float = distil.DUPLICATE_COS,
        supersede: bool = True,
    ) -> None:
        self.res = res
        self._facts = facts
        self._source: FactSource | None = None
        self.buffer = buffer
        self.duplicate_cos = duplicate_cos
        self.supersede = supersede

    @property
    def source(self) -> FactSource:
        if self._source is None:
            self._source = self._facts()
        return self._source

    async def run(
        self,
        tenant: str,
        now: datetime,
        settled: dict[cons.GroupKey, list[cons.Member]],
    ) -> int:
        """Distil the settled episodes not distilled with these members yet, and the
        skipped captures; returns how many facts were stored or changed."""
        done_key = keys.distilled(tenant)
        seen = await self.res.redis.hgetall(done_key)
        marks = {_s(k): _s(v) for k, v in seen.items()}
        units: list[tuple[Owner, list[distil.Source]]] = []
        new_marks: dict[str, str] = {}
        for key, members in settled.items():
            rid = cons.record_id(tenant, key)
            digest = _digest([m.id for m in members])
            if marks.get(rid) == digest:
                continue
            new_marks[rid] = digest
            units.append(
                (
                    _owner_of(key),
                    [
                        distil.Source(m.id, m.text, m.created_at.timestamp())
                        for m in cons.ordered(members)
                    ],
                )
            )
        buffered = await self.buffer.skipped(tenant)
        by_owner: dict[Owner, list[distil.Source]] = defaultdict(list)
        for _, b in buffered:
            by_owner[visibility.owner(b.owner())].append(_source_of(b))
        units += list(by_owner.items())
        changed = 0
        for owner, sources in units:
            found = distil.gather(await self.source.facts(sources))
            dead = await tombstoned(self.res.redis, tenant, [s for c in found for s in c.sources])
            for cand in found:
                cand.sources = [s for s in cand.sources if s not in dead]
                if cand.sources:
                    changed += await self._store(tenant, owner, cand, now)
        if new_marks:
            await self.res.redis.hset(done_key, mapping=cast(Any, new_marks))
        await self.buffer.drop(tenant, [raw for raw, _ in buffered])
        return changed

    async def _store(self, tenant: str, owner: Owner, cand: distil.Candidate, now: datetime) -> int:
        """Store one fact, or add its sources to the fact it duplicates: 1 when anything
        was written."""
        fid = distil.fact_id(tenant, owner, cand.text)
        same = await self.res.vectors.get(tenant, [fid])
        if same:
            return await self._add_sources(tenant, same[0], cand.sources)
        vec = await self.res.embedder.embed_one(cand.text)
        near = await self.res.vectors.search(
            tenant,
            vec,
            limit=5,
            flt=Filter(
                must={**visibility.peers(_owner_fields(owner)), "kind": distil.KIND},
                must_not={"state": "superseded"},
            ),
        )
        same = [
            p
            for p in near
            if p.score >= self.duplicate_cos
            and not distil.distinct(
                cand.relation, (p.payload.get("metadata") or {}).get("relation")
            )
        ]
        if same:
            return await self._add_sources(tenant, same[0], cand.sources)
        older = self._superseded(cand, near) if self.supersede else None
        rec = _fact_record(tenant, fid, owner, cand, now, older)
        await self.res.vectors.upsert(
            [
                VectorPoint(
                    id=fid,
                    vector=vec,
                    payload=rec.to_payload(),
                    sparse=encode_document(cand.text),
                )
            ]
        )
        if older is not None:
            await self._mark_superseded(tenant, older, fid)
        log.info("fact_distilled", tenant=tenant, memory_id=fid, sources=len(cand.sources))
        return 1

    async def _add_sources(self, tenant: str, point: ScoredPoint, more: list[str]) -> int:
        have = [str(s) for s in point.payload.get("sources") or []]
        merged = distil.merged_sources(have, more)
        if merged == have:
            return 0
        await self.res.vectors.set_payload(tenant, point.id, {"sources": merged})
        return 1

    @staticmethod
    def _superseded(cand: distil.Candidate, near: list[ScoredPoint]) -> str | None:
        """The active fact of the owner that this one updates (`domain.distil`)."""
        for p in near:
            relation = (p.payload.get("metadata") or {}).get("relation")
            if p.payload.get("state", "active") == "active" and distil.replaces(
                cand.relation, relation
            ):
                return p.id
        earlier = [
            supersession.Earlier(p.id, str(p.payload.get("text") or ""), p.score)
            for p in near
            if p.payload.get("state", "active") == "active"
        ]
        return supersession.superseded(cand.text, earlier)

    async def _mark_superseded(self, tenant: str, old: str, by: str) -> None:
        changed = [MemoryChanged(tenant=tenant, memory_id=old, change="superseded")]
        await outbox.owe(self.res.redis, changed)
        await self.res.vectors.set_payload(
            tenant, old, {"state": "superseded", "superseded_by": by}
        )
        await outbox.pay_or_leave_owed(self.res, changed)
        log.info("fact_superseded", tenant=tenant, memory_id=old, by=by)


def _s(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v


def _source_of(b: Buffered) -> distil.Source:
    try:
        ts = datetime.fromisoformat(b.created_at).timestamp()
    except ValueError:
        ts = 0.0
    return distil.Source(b.id, b.text, ts)


def _fact_record(
    tenant: str,
    fid: str,
    owner: Owner,
    cand: distil.Candidate,
    now: datetime,
    supersedes: str | None,
) -> MemoryRecord:
    user, scope, workspace, project = owner
    created = datetime.fromtimestamp(cand.latest_ts, UTC) if cand.latest_ts else now
    return MemoryRecord(
        id=fid,
        tenant=tenant,
        user_id=user or None,
        scope=Scope(scope),
        workspace=workspace,
        project=project,
        text=cand.text,
        text_hash=hash_of(cand.text),
        created_at=min(created, now),
        ingested_at=now,
        strength=Strength(s_ref=initial_strength("normal"), t_ref=now),
        source=Source.CONSOLIDATION,
        kind=distil.KIND,
        sources=list(cand.sources),
        supersedes=supersedes,
        metadata={"relation": list(cand.relation)} if cand.relation else {},
        # Derived from memories the graph and the judge have seen: neither processes it.
        graph=GraphInfo(extracted=True, extracted_at=now),
        surprisal=Surprisal(judged_at=now),
    )


def fact_source(res: SweeperPorts, settings: SweeperSettings) -> FactSource:
    """The LLM's statements when the extractor is the LLM, else the graph extractor's
    relations (the process's extractor where it has one, else the local rules)."""
    if settings.extractor == "llm":
        options = dict(settings.distil_llm_options)
        if settings.extraction_api_base:
            options.setdefault("api_base", settings.extraction_api_base)
        return LlmFacts(settings.extraction_model, timeout_s=settings.distil_timeout_s, **options)
    extractor = getattr(res, "extractor", None)
    if not isinstance(extractor, Extractor):
        from pcm_common.extract.local import LocalExtractor

        extractor = LocalExtractor()
    return RelationFacts(extractor)


def distiller_for(res: SweeperPorts, settings: SweeperSettings) -> Distiller:
    return Distiller(
        res,
        lambda: fact_source(res, settings),
        CaptureBuffer(res.redis),
        duplicate_cos=settings.distil_duplicate_cos,
        supersede=settings.supersession,
    )
