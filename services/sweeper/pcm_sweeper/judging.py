"""Surprisal judging in the sweeper (whitepaper §3.7, DESIGN §3).

Each written memory gets a family (up to 12 earlier memories of its own group: the same
tenant, user and scope, `domain.visibility.peers`; with cos >= 0.45, at least 4) and a
verdict from the configured judge; score, what differs, the usual pattern, the family ids
and `judged_at` are stored in its `surprisal` field.

Judging runs in the sweeper's own consumer group and never on the ingest or recall path.
A failing judge (model error, timeout) leaves the memory unjudged (`judged_at` empty) and the
event is acknowledged; the scheduled sweep finds and judges it later. Storing is
idempotent: judging the same memory again writes the same verdict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain import supersession, visibility
from pcm_common.domain import surprisal as sp
from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import MemoryRecord
from pcm_common.judge import MEMBER_FIELDS, FamilyMember, Judge, Verdict, make_judge
from pcm_common.messaging import outbox
from pcm_common.messaging.events import MemoryChanged, MemoryWritten
from pcm_common.ports import SweeperPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import memory_lock
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery
from pcm_sweeper.judgement import (
    Judgement,
    created_ts,
    event_times,
    events,
    events_before,
    routine_item,
)
from pcm_sweeper.judging_config import JudgingConfig
from pcm_sweeper.kin import Kinship, routine_kin

log = get_logger("sweeper.judging")

# The payload fields read of a family member: choosing the family (created_ts), counting
# its events (created_ts, repeats), the judge (`MEMBER_FIELDS`) and the routine index
# (the owner fields, `visibility.same_group`). Whole payloads cost ~4x more per search:
# most of it went into turning unread fields into Python objects.
# Supersession reads `pinned` and `state` (a pin or an archived memory is not replaced).
FAMILY_FIELDS = tuple(
    dict.fromkeys(("created_ts", *visibility.OWNER_FIELDS, "pinned", "state", *MEMBER_FIELDS))
)


class Judging:
    def __init__(
        self, res: SweeperPorts, settings: Any = None, *, judge: Judge | None = None
    ) -> None:
        self.res = res
        self.config = JudgingConfig.from_settings(settings)
        self._judge = judge

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            c = self.config
            if c.judge == "llm":
                kwargs: dict[str, Any] = {"model": c.judge_model, "timeout_s": c.judge_timeout_s}
                if c.judge_api_base:
                    kwargs["api_base"] = c.judge_api_base
                self._judge = make_judge("llm", **kwargs)
            else:
                self._judge = make_judge(c.judge)
        return self._judge

    async def on_written(self, event: MemoryWritten) -> None:
        """Consumer of `pcm.memory.written` (sweeper-written group)."""
        found = await self.res.vectors.get(event.tenant, [event.memory_id], with_vectors=True)
        if not found:
            return  # deleted meanwhile: nothing to judge
        if (found[0].payload.get("surprisal") or {}).get("judged_at"):
            return  # redelivery or merged duplicate: already judged
        await self.judge_point(event.tenant, found[0])

    async def family(self, tenant: str, point: ScoredPoint) -> list[ScoredPoint]:
        """Up to `family_max` nearest earlier memories of the same group (`peers`) with
        cos >= `family_min_cos`, nearest first (may be fewer than `family_min`). Their
        payloads hold `FAMILY_FIELDS` only."""
        (found,) = await self.families([(tenant, point)])
        if isinstance(found, Exception):
            raise found
        return found

    @staticmethod
    def memories(points: Sequence[ScoredPoint]) -> list[MemoryRecord | Exception]:
        """Each point's memory, or the error that its payload gave."""
        out: list[MemoryRecord | Exception] = []
        for point in points:
            try:
                out.append(MemoryRecord.from_payload(point.payload))
            except Exception as exc:
                out.append(exc)
        return out

    async def families(
        self,
        items: Sequence[tuple[str, ScoredPoint]],
        memories: Sequence[MemoryRecord | Exception] | None = None,
    ) -> list[list[ScoredPoint] | Exception]:
        """`family` of each (tenant, point), searched as one batch; a point whose payload
        cannot be read gets its error instead, and fails alone. `memories`: the points'
        `memories`, when the caller read them already (they go on to `plan`: validating
        a whole payload twice was a fifth of the sweeper's own work per memory)."""
        if memories is None:
            memories = self.memories([point for _, point in items])
        out: list[list[ScoredPoint] | Exception] = [[] for _ in items]
        todo: list[tuple[int, datetime]] = []  # (index in items, creation time)
        for n, (_, point) in enumerate(items):
            if point.vector is None:  # read without its vector: nothing to search with
                continue
            memory = memories[n]
            if isinstance(memory, Exception):
                out[n] = memory
            else:
                todo.append((n, memory.created_at))
        # Of the memories created before each (`created_until`): the store plans how.
        found = await self.res.vectors.search_many(
            [self._family_query(items[n], at) for n, at in todo], fields=FAMILY_FIELDS
        )
        for (n, at), hits in zip(todo, found, strict=True):
            out[n] = self._select(items[n][1], hits, at)
        return out

    def _family_query(self, item: tuple[str, ScoredPoint], at: datetime) -> SearchQuery:
        """The family search of `item`, created `at`: of memories of its group created at
        least `SIMULTANEOUS_S` before `at`."""
        tenant, point = item
        return SearchQuery(
            tenant,
            point.vector or [],
            limit=self.config.family_max,
            # Consolidated episode records summarise other memories: not events.
            flt=Filter(
                must=visibility.peers(point.payload),
                must_not={"state": "superseded", "source": "consolidation"},
            ),
            # Hits below the family threshold are never family: their payloads (most of a
            # search's cost after the scan, ~10 us each) are not read.
            min_score=self.config.family_min_cos,
            created_until=at.timestamp() - sp.SIMULTANEOUS_S,
        )

    def _select(
        self, point: ScoredPoint, hits: Sequence[ScoredPoint], at: datetime
    ) -> list[ScoredPoint]:
        """The family among `hits` (nearest first): those created at least
        `SIMULTANEOUS_S` before `at`, as the search's cut says it. A hit without a creation
        time is never family (the store's cut leaves it out too)."""
        c = self.config
        by_id = {h.id: h for h in hits}
        ids = sp.select_family(
            (
                sp.Candidate(h.id, h.score, float(ts))
                for h in hits
                if h.id != point.id
                and isinstance(ts := h.payload.get("created_ts"), int | float)
                and not isinstance(ts, bool)
            ),
            at.timestamp() - sp.SIMULTANEOUS_S,
            min_cos=c.family_min_cos,
            max_size=len(hits),
        )
        return [by_id[i] for i in ids[: c.family_max]]

    def plan(
        self,
        point: ScoredPoint,
        family: list[ScoredPoint],
        memory: MemoryRecord | None = None,
        kinship: Kinship | None = None,
    ) -> Judgement:
        """What judging `point` against its `family` involves, read from the payloads once
        (`memory`: the point's, when read already). With `kinship` (`pcm_sweeper.kin`),
        the judge compares the family without the members of other routines, plus the
        routine's entries in other wordings, when that leaves enough events."""
        if memory is None:
            memory = MemoryRecord.from_payload(point.payload)
        # Exact and near duplicates are stored once with their repeat dates: a family
        # member stands for every earlier event it records.
        times = [event_times(f.payload) for f in family]
        cut = memory.created_at.timestamp()
        counts = [events_before(t, cut) for t in times]
        compared, kin, n_events = family, [], sum(counts)
        if kinship is not None:
            own = sum(n for f, n in zip(family, counts, strict=True) if f.id not in kinship.foreign)
            wider = own + events(kinship.kin, cut)
            if wider >= self.config.family_min:
                compared = [f for f in family if f.id not in kinship.foreign] + kinship.kin
                kin, n_events = kinship.kin, wider
        records = (
            [FamilyMember.of_payload(f.payload) for f in compared]
            if n_events >= self.config.family_min
            else None
        )
        return Judgement(point, memory, family, records, times, kin)

    async def kinship(
        self, items: Sequence[tuple[str, ScoredPoint, list[ScoredPoint]]]
    ) -> list[Kinship]:
        """What the routine index says of each (tenant, point, family) (`pcm_sweeper.kin`)."""
        if not self.config.kin:
            return [Kinship() for _ in items]
        return await routine_kin(
            self.res,
            [(t, p, f, created_ts(p)) for t, p, f in items],
            fields=(*FAMILY_FIELDS, "source"),
            max_size=self.config.family_max,
        )

    async def prepare(self, judgements: Sequence[Judgement]) -> None:
        """Tell the judge which verdicts come next, so work they share is done once (the
        local judge parses the texts it has not seen in one batch). Best effort: a judge
        that failed here still judges each memory on its own."""
        due = [(j.memory, j.records) for j in judgements if j.records is not None]
        if not due:
            return
        try:
            await self.judge.prepare(due)
        except Exception as exc:
            log.warning("judge_prepare_failed", size=len(due), error=repr(exc)[:300])

    async def judge_point(
        self, tenant: str, point: ScoredPoint, planned: Judgement | None = None
    ) -> bool:
        """Judge one memory and store the verdict; False when the judge failed (the memory
        stays unjudged for the sweep). `planned` is its `plan`, when the caller searched
        the family already. Raises when the routine index or the store failed."""
        if planned is None:
            family = await self.family(tenant, point)
            (kinship,) = await self.kinship([(tenant, point, family)])
            planned = self.plan(point, family, kinship=kinship)
        j = planned
        (outcome,) = await self.judge_many([(tenant, j)])
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def judge_many(
        self, items: Sequence[tuple[str, Judgement]]
    ) -> list[bool | BaseException]:
        """Judge planned memories (a batch read from the stream) and store the verdicts:
        one judge call for the batch, one routine-index transaction and one payload write
        per tenant, instead of a thread hop, three Redis round trips and a store write per
        memory. Per item: True (judged), False (the judge failed: left unjudged for the
        sweep), or the error of the routine index or the store (the event is retried)."""
        out: list[bool | BaseException] = [True] * len(items)
        due = [n for n, (_, j) in enumerate(items) if j.records is not None]
        verdicts = await self.judge.judge_many(
            [(items[n][1].memory, items[n][1].records or []) for n in due],
            self.config.judge_timeout_s,
            self.config.concurrency,
        )
        verdict_of: dict[int, Verdict] = {}
        for n, v in zip(due, verdicts, strict=True):
            if isinstance(v, Exception):  # model error or timeout: judged later by the sweep
                tenant, j = items[n]
                log.warning(
                    "judge_failed", tenant=tenant, memory_id=j.point.id, error=repr(v)[:300]
                )
                out[n] = False
            else:
                verdict_of[n] = v
        by_tenant: dict[str, list[int]] = {}
        for n, (tenant, _) in enumerate(items):
            if out[n] is True:
                by_tenant.setdefault(tenant, []).append(n)
        for tenant, ns in by_tenant.items():
            try:
                await self._store(tenant, [(items[n][1], verdict_of.get(n)) for n in ns])
            except Exception as exc:
                for n in ns:
                    out[n] = exc
        return out

    async def _store(self, tenant: str, judged: list[tuple[Judgement, Verdict | None]]) -> None:
        """The routine index first: if it fails the events are retried, and a stored
        verdict would make the retry skip them. Too small a family: judged with no score,
        the family ids are kept (routines use them)."""
        await self.res.routines.record_many(
            tenant, [routine_item(j.point, j.family, j.family_times) for j, _ in judged]
        )
        now = utcnow().isoformat()
        patches: list[tuple[str, dict[str, Any]]] = []
        replaced: list[tuple[str, dict[str, Any]]] = []  # superseded memories, their patches
        for j, verdict in judged:
            surprisal: dict[str, Any] = {
                "score": None,
                "differs": "",
                "usual": "",
                "family_ids": [f.id for f in j.family],
                "kin_ids": [f.id for f in j.kin],
                "judged_at": now,
                "grouping": visibility.GROUPING,
            }
            if verdict is not None:
                surprisal.update(
                    score=round(verdict.score, 4), differs=verdict.differs, usual=verdict.usual
                )
            # With what the judge keeps for later judgements of this memory's family.
            patch = {"surprisal": surprisal, **self.judge.stored_features(j.memory)}
            old = self._supersedes(j, verdict)
            if old is not None:
                patch["supersedes"] = old
                replaced.append((old, {"state": "superseded", "superseded_by": j.point.id}))
            patches.append((j.point.id, patch))
        # The newer memory's link first: after a crash between the two, the redelivery
        # finds the link and writes the older one's state again (`_supersedes`); the
        # other order could leave a superseded memory that nothing links to.
        superseded = [
            MemoryChanged(tenant=tenant, memory_id=old, change="superseded") for old, _ in replaced
        ]
        # Owed before the write: once the verdict is stored, a redelivery skips the memory
        # (judged), so a publish lost here would never be made again but by the outbox.
        await outbox.owe(self.res.redis, superseded)
        # An older memory's state is set under its lock: reconsolidation rewrites a memory
        # whole under that lock, and would otherwise write back the state it read.
        olds = [memory_lock(tenant, old) for old, _ in replaced]
        async with KeyLocks(self.res.redis).hold(olds):
            await self.res.vectors.set_payload_many(tenant, [*patches, *replaced])
        await outbox.pay_or_leave_owed(self.res, superseded)
        for old, patch in replaced:
            log.info("memory_superseded", tenant=tenant, memory_id=old, by=patch["superseded_by"])
        for (j, _), (_, patch) in zip(judged, patches, strict=True):
            log.info(
                "memory_judged",
                tenant=tenant,
                memory_id=j.point.id,
                family=len(j.family),
                score=patch["surprisal"]["score"],
            )

    def _supersedes(self, j: Judgement, verdict: Verdict | None = None) -> str | None:
        """The family member the judged memory supersedes: one of the same user, active and
        not pinned (a pin changes only when asked); the model's choice when the judge
        decides supersession and gave a verdict, else the rules (`domain.supersession`).
        None when off. A memory an earlier delivery linked already keeps that link (its
        older memory is left out of the family by now, and its state is written again)."""
        if not self.config.supersession:
            return None
        linked = j.point.payload.get("supersedes")
        if linked:
            return str(linked)

        def eligible(f: ScoredPoint) -> bool:
            return (
                visibility.same_group(f.payload, j.point.payload)
                and not f.payload.get("pinned")
                and f.payload.get("state", "active") == "active"
            )

        if verdict is not None and self.judge.decides_supersession:
            if verdict.updates is None or not 0 <= verdict.updates < len(j.family):
                return None
            chosen = j.family[verdict.updates]
            return chosen.id if eligible(chosen) else None
        earlier = [
            supersession.Earlier(f.id, str(f.payload.get("text") or ""), f.score)
            for f in j.family
            if eligible(f)
        ]
        return supersession.superseded(j.memory.text, earlier)

    async def index_routine(
        self, tenant: str, point: ScoredPoint, family: list[ScoredPoint]
    ) -> str | None:
        """Place the memory in its routine (the sweeper's routine index, read by recall's
        stopped-routine flags)."""
        return await self.res.routines.record(tenant, *routine_item(point, family))

    async def rebuild_routines(self, tenant: str) -> int:
        """Rebuild the tenant's routine index from the stored families, oldest first (after
        a Redis without its data, or for memories judged before the index existed).
        Idempotent. Returns how many memories were placed in a routine."""
        points: list[ScoredPoint] = []
        judged = Filter(must_not={"surprisal.judged_at": None, "source": "consolidation"})
        async for page in self.res.vectors.pages(tenant, flt=judged, size=self.config.sweep_batch):
            points.extend(page)
        by_id = {p.id: p for p in points}
        points.sort(key=lambda p: float(p.payload.get("created_ts") or 0.0))
        placed = 0
        for p in points:
            ids = (p.payload.get("surprisal") or {}).get("family_ids") or []
            family = [by_id[i] for i in ids if i in by_id]
            if await self.index_routine(tenant, p, family) is not None:
                placed += 1
        log.info("routines_rebuilt", tenant=tenant, memories=len(points), placed=placed)
        return placed

    async def sweep(self, tenant: str, now: datetime) -> int:
        """Judge whatever was missed (no `surprisal.judged_at`), then up to `sweep_batch`
        verdicts of an older grouping rule again: a scheduled job (every 2 minutes).
        Returns how many memories were judged."""
        grace = utcnow() - timedelta(seconds=self.config.sweep_grace_s)
        pending: list[ScoredPoint] = []
        unjudged = Filter(must={"surprisal.judged_at": None})
        async for page in self._vector_pages(tenant, unjudged):
            for p in page:
                ingested = p.payload.get("ingested_at")
                if ingested and datetime.fromisoformat(ingested) > grace:
                    continue  # the event consumer is on it
                pending.append(p)
        legacy = Filter(
            must_not={
                "surprisal.judged_at": None,
                "surprisal.grouping": visibility.GROUPING,
                "source": "consolidation",
            }
        )
        async for page in self._vector_pages(tenant, legacy):
            pending.extend(page)
            break  # one batch per run
        # Oldest first, so each memory's earlier family is already judged and complete.
        pending.sort(key=lambda p: float(p.payload.get("created_ts") or 0.0))
        judged = 0
        for p in pending:
            if await self.judge_point(tenant, p):
                judged += 1
        if judged:
            log.info("surprisal_sweep", tenant=tenant, judged=judged, now=now.isoformat())
        return judged

    def _vector_pages(self, tenant: str, flt: Filter) -> AsyncIterator[list[ScoredPoint]]:
        """Pages of the tenant's points matching `flt`, with vectors (the judge reads them)."""
        return self.res.vectors.pages(
            tenant, flt=flt, with_vectors=True, size=self.config.sweep_batch
        )
