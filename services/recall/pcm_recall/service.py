"""Read path: query embedding -> filtered vector candidates -> cognitive score -> episode
context -> PAE slots. Side effects (reinforcement) happen in the sweeper, off this path."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain import scoring
from pcm_common.domain.memory import MemoryRecord, as_utc, utcnow
from pcm_common.domain.strength import decayed
from pcm_common.events import STREAM_RECALLED, MemoryRecalled, RecalledItem
from pcm_common.resources import Resources
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_common.telemetry import RECALL_STAGE_SECONDS, get_logger
from pcm_recall.pinned import PinnedCache
from pcm_recall.prompt import render
from pcm_recall.schemas import ContextItem, RecallIn, RecallOut
from pcm_recall.settings import RecallSettings

log = get_logger("recall")


class _Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        t = time.perf_counter()
        self.ms[stage] = round((t - self._t) * 1000, 3)
        RECALL_STAGE_SECONDS.labels(stage).observe(t - self._t)
        self._t = t


def visibility(req: RecallIn, include_archived: bool) -> Filter:
    """A project sees itself, its workspace and global; never another project."""
    should: list[dict[str, Any]] = [{"scope": "global"}]
    if req.workspace:
        should.append({"scope": "workspace", "workspace": req.workspace})
    if req.project:
        group: dict[str, Any] = {"scope": "project", "project": req.project}
        if req.workspace:
            group["workspace"] = req.workspace
        should.append(group)
    states = ["active", "archived"] if include_archived else ["active"]
    must: dict[str, Any] = {"state": states}
    if req.user_id:
        must["user_id"] = req.user_id
    return Filter(must=must, should=should)


class RecallService:
    def __init__(self, res: Resources, settings: RecallSettings) -> None:
        self.res = res
        self.settings = settings
        self.pinned = PinnedCache(res.vectors, settings.max_pinned)

    async def recall(self, tenant: str, req: RecallIn) -> tuple[RecallOut, MemoryRecalled | None]:
        timer = _Timer()
        now = as_utc(req.now) if req.now else utcnow()
        k = req.k or (self.settings.compact_k if req.compact else self.settings.default_k)
        qvec = await self.res.embedder.embed_one(req.query)
        timer.lap("embed")
        flt = visibility(req, req.include_archived)
        hits = await self.res.vectors.search(tenant, qvec, limit=scoring.pool_size(k), flt=flt)
        timer.lap("search")
        scored = self._score(hits, now, req)
        top = scored[:k]
        timer.lap("score")
        episode = await self._episode_context(tenant, top, k, {c.memory_id for c in top})
        asker = [self._item(p, now, rel=1.0, score=1.0) for p in await self.pinned.get(tenant)]
        timer.lap("context")
        prompt = render([], asker, top, episode, scoring.prompt_budget_chars(k))
        timer.lap("render")
        out = RecallOut(
            anomaly_flags=[],
            asker_context=asker,
            situational_context=top,
            episode_context=episode,
            prompt=prompt,
            empty=not top,
            timings_ms=timer.ms,
        )
        event = None
        if top:
            event = MemoryRecalled(
                tenant=tenant,
                query=req.query,
                now=now,
                items=[
                    RecalledItem(memory_id=c.memory_id, rank=i, relevance=c.relevance)
                    for i, c in enumerate(top)
                ],
            )
        log.info("recalled", tenant=tenant, k=k, returned=len(top), timings_ms=timer.ms)
        return out, event

    async def publish(self, event: MemoryRecalled) -> None:
        await self.res.bus.publish(STREAM_RECALLED, event)

    def _score(self, hits: list[ScoredPoint], now: datetime, req: RecallIn) -> list[ContextItem]:
        items = []
        for h in hits:
            rel = h.score
            if not scoring.passes_floor(rel, self.settings.relevance_floor):
                continue
            items.append(self._item(h, now, rel=rel, score=None, req=req))
        items.sort(key=lambda c: c.score, reverse=True)
        return items

    def _item(
        self,
        p: ScoredPoint,
        now: datetime,
        rel: float,
        score: float | None,
        req: RecallIn | None = None,
    ) -> ContextItem:
        rec = MemoryRecord.from_payload(p.payload)
        st = rec.strength
        s = decayed(st.s_ref, st.t_ref, st.n, now, rec.pinned)
        if score is None:
            bonus = 0.0
            if req is not None and rec.scope.value == "project":
                bonus = self.settings.scope_bonus_project
            elif req is not None and rec.scope.value == "workspace":
                bonus = self.settings.scope_bonus_workspace
            score = scoring.score(rel, s, 0.0, bonus)
        return ContextItem(
            memory_id=rec.id,
            text=rec.text,
            created_at=rec.created_at,
            score=round(score, 6),
            relevance=round(rel, 6),
            strength=round(s, 6),
            scope=rec.scope.value,
            episode=rec.episode,
            metadata=rec.metadata,
        )

    async def _episode_context(
        self, tenant: str, top: list[ContextItem], k: int, exclude: set[str]
    ) -> list[ContextItem]:
        """Neighbours saved in the same episode within the window around the best seeds."""
        window = timedelta(minutes=self.settings.episode_window_min)
        n = self.settings.episode_neighbours
        out: dict[str, ContextItem] = {}
        for seed in [c for c in top if c.episode][: scoring.episode_seeds(k)]:
            t = seed.created_at.timestamp()
            flt = Filter(
                must={"episode": seed.episode, "state": "active"},
                ranges={"created_ts": (t - window.total_seconds(), t + window.total_seconds())},
            )
            points, _ = await self.res.vectors.scroll(tenant, flt=flt, limit=4 * n + 8)
            recs = sorted(
                (MemoryRecord.from_payload(p.payload) for p in points), key=lambda r: r.created_at
            )
            idx = next((i for i, r in enumerate(recs) if r.id == seed.memory_id), None)
            if idx is None:
                continue
            for r in recs[max(0, idx - n) : idx] + recs[idx + 1 : idx + 1 + n]:
                if r.id in exclude or r.id in out:
                    continue
                out[r.id] = ContextItem(
                    memory_id=r.id,
                    text=r.text,
                    created_at=r.created_at,
                    score=0.0,
                    relevance=0.0,
                    strength=r.strength.s_ref,
                    scope=r.scope.value,
                    episode=r.episode,
                    metadata=r.metadata,
                )
        return sorted(out.values(), key=lambda c: c.created_at)
