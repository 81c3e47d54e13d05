"""Associative recall (`mode: "associative"`): energy spreads from the answer's best
memories over three kinds of edge, read hop by hop (`pcm_common.domain.association` does
the arithmetic):

- similar: the nearest memories to the memory's own vector, cosine >= `associative_min_cos`;
- episode: the memories next to it in its episode, within the episode window;
- graph: the memories that mention an entity it mentions (`GraphStore.neighbours`).

Every read is within what the request sees (`visible`): similarity and episode reads carry
the filter, and the graph, which knows only tenants, is checked against the memories'
payloads before its neighbours count. So energy never crosses to another user's, project's
or tenant's memories, and never passes through one either.

A hop costs one read of the frontier's vectors and then, at once, a batch of searches, a
batch of timelines and one graph query per memory (bounded by `associative_timeout_s`: a
slow or absent graph leaves the graph edges out, not the answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

from pcm_common.domain import association as assoc
from pcm_common.ports import RecallPorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery, payload_matches
from pcm_recall.context import EPISODE_SCAN
from pcm_recall.schemas import Association, ContextItem
from pcm_recall.settings import RecallSettings

log = get_logger("recall.associations")

# What `visible` tests, read for the graph's neighbours (the graph holds no owners).
OWNER_FIELDS = ("state", "user_id", "scope", "workspace", "project", "source", "created_ts")
# A memory's text is cut to this in the answer and the prompt: associations are context
# around the answer, not the answer.
TEXT_CHARS = 1_000


class Associator:
    def __init__(self, res: RecallPorts, settings: RecallSettings) -> None:
        self.res = res
        self.settings = settings

    async def reach(
        self,
        tenant: str,
        seeds: Sequence[ContextItem],
        shown: set[str],
        visible: Filter,
    ) -> list[Association]:
        """The memories the spreading reaches from the best `associative_seeds` of `seeds`
        that the answer does not show already (`shown`), the most energetic first."""
        s = self.settings
        if s.associative_max <= 0 or not seeds:
            return []
        top = [(c.memory_id, c.score) for c in seeds[: s.associative_seeds]]
        reached = assoc.seeded(assoc.seed_energies(top))
        expanded: set[str] = set()
        for _ in range(s.associative_max_hops):
            todo = assoc.frontier(
                reached,
                expanded,
                decay=s.associative_decay,
                min_energy=s.associative_min_energy,
                limit=s.associative_frontier,
            )
            if not todo:
                break
            expanded.update(todo)
            edges = await self._edges(tenant, todo, visible)
            reached = assoc.step(
                reached,
                todo,
                edges,
                decay=s.associative_decay,
                min_energy=s.associative_min_energy,
            )
        picked = assoc.associations(reached, shown, s.associative_max)
        return await self._items(tenant, picked, visible)

    async def _edges(
        self, tenant: str, ids: list[str], visible: Filter
    ) -> dict[str, list[assoc.Edge]]:
        """The edges of each memory in `ids`, all three kinds read at once."""
        points = await self.res.vectors.get(
            tenant, ids, with_vectors=True, fields=("episode", "created_ts")
        )
        similar, episode, graph = await asyncio.gather(
            self._similar(tenant, points, visible),
            self._episode(tenant, points, visible),
            self._graph(tenant, ids, visible),
        )
        out: dict[str, list[assoc.Edge]] = {}
        for group in (similar, episode, graph):
            for mid, edges in group.items():
                out.setdefault(mid, []).extend(edges)
        return out

    async def _similar(
        self, tenant: str, points: list[ScoredPoint], visible: Filter
    ) -> dict[str, list[assoc.Edge]]:
        s = self.settings
        # A memory awaiting repair has no vector, hence no similar memories.
        with_vec = [p for p in points if p.vector and any(p.vector)]
        if s.associative_similar <= 0 or not with_vec:
            return {}
        queries = [
            SearchQuery(
                tenant,
                list(p.vector or []),
                limit=s.associative_similar + 1,  # the memory itself comes first
                flt=visible,
                min_score=s.associative_min_cos,
            )
            for p in with_vec
        ]
        found = await self.res.vectors.search_many(queries, fields=())
        return {
            p.id: [
                assoc.Edge(h.id, assoc.SIMILAR)
                for h in hits
                if h.id != p.id and h.score >= s.associative_min_cos
            ][: s.associative_similar]
            for p, hits in zip(with_vec, found, strict=True)
        }

    async def _episode(
        self, tenant: str, points: list[ScoredPoint], visible: Filter
    ) -> dict[str, list[assoc.Edge]]:
        s = self.settings
        n = s.associative_episode
        dated = [
            p
            for p in points
            if p.payload.get("episode") and isinstance(p.payload.get("created_ts"), (int, float))
        ]
        if n <= 0 or not dated:
            return {}
        window = timedelta(minutes=s.episode_window_min).total_seconds()
        filters = [_episode_window(p, visible, window) for p in dated]
        lines = await self.res.vectors.timelines(
            tenant, filters, key="created_ts", limit=EPISODE_SCAN
        )
        out: dict[str, list[assoc.Edge]] = {}
        for p, line in zip(dated, lines, strict=True):
            ids = [pid for pid, _ in line]
            if p.id not in ids:
                continue
            i = ids.index(p.id)
            near = ids[max(0, i - n) : i] + ids[i + 1 : i + 1 + n]
            out[p.id] = [assoc.Edge(m, assoc.EPISODE) for m in near]
        return out

    async def _graph(
        self, tenant: str, ids: list[str], visible: Filter
    ) -> dict[str, list[assoc.Edge]]:
        s = self.settings
        if s.associative_graph <= 0 or not s.graph_links:
            return {}
        graph = self.res.graph
        try:
            found = await asyncio.wait_for(
                asyncio.gather(
                    *(graph.neighbours(tenant, m, limit=s.associative_graph) for m in ids)
                ),
                timeout=s.associative_timeout_s,
            )
        except Exception as exc:  # the graph is an extra: without it, no graph edges
            log.warning("association_graph_failed", tenant=tenant, error=repr(exc)[:200])
            return {}
        targets = sorted({t for near in found for t in near})
        if not targets:
            return {}
        # The graph holds tenants, not owners: only the neighbours this request sees count.
        seen = {
            p.id
            for p in await self.res.vectors.get(tenant, targets, fields=OWNER_FIELDS)
            if payload_matches(visible, p.payload)
        }
        return {
            m: [assoc.Edge(t, assoc.GRAPH) for t in near if t in seen]
            for m, near in zip(ids, found, strict=True)
        }

    async def _items(
        self, tenant: str, picked: list[assoc.Reached], visible: Filter
    ) -> list[Association]:
        if not picked:
            return []
        points = {
            p.id: p for p in await self.res.vectors.get(tenant, [r.memory_id for r in picked])
        }
        out: list[Association] = []
        for r in picked:
            p = points.get(r.memory_id)
            # Checked again on the whole record: it may have changed since its edge was read.
            if p is None or not payload_matches(visible, p.payload):
                continue
            out.append(
                Association(
                    memory_id=r.memory_id,
                    text=str(p.payload.get("text", ""))[:TEXT_CHARS],
                    energy=round(r.energy, 4),
                    via=r.via,
                    hops=r.hops,
                    created_at=p.payload.get("created_at"),
                )
            )
        return out


def _episode_window(p: ScoredPoint, visible: Filter, window: float) -> Filter:
    """The memories of `p`'s episode within the window around it, as the request sees
    them (episode records left out: `visible` says so)."""
    t = float(p.payload["created_ts"])
    lo, hi = visible.ranges.get("created_ts", (None, None))
    span = (
        t - window if lo is None else max(t - window, lo),
        t + window if hi is None else min(t + window, hi),
    )
    return Filter(
        must={**visible.must, "episode": p.payload["episode"]},
        must_not=dict(visible.must_not),
        ranges={**visible.ranges, "created_ts": span},
        should=list(visible.should),
    )
