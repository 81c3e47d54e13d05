"""Context: the seeds' episode records returned whole in the answer, the episode neighbours
of the seeds, and the asker's pinned memories as items."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import Any

from pcm_common.domain import scoring
from pcm_common.domain.consolidation import GroupKey, record_id
from pcm_common.domain.memory import ItemView, MemoryRecord
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_recall.items import context_item
from pcm_recall.ranking import Candidate, strength_at
from pcm_recall.schemas import ContextItem, RecallIn
from pcm_recall.settings import RecallSettings

EPISODE_SCAN = 256  # memories read per episode window when expanding seeds


class EpisodeContext:
    """The answer's items and their episode context: the seeds' consolidated episode
    records returned whole, and the memories next to the seeds in their episodes."""

    def __init__(self, res: Any, settings: RecallSettings) -> None:
        self.res = res  # its `vectors` are read
        self.settings = settings

    def archived_neighbours(self, req: RecallIn) -> bool:
        """Whether an archived memory next to a recalled seed joins the episode context:
        recalling the seed reactivates its episode (an episode record already returns its
        archived sources' text), and `include_archived` must find them there too."""
        return req.include_archived or self.settings.archived_episode_neighbours

    async def with_records(self, tenant: str, ranked: list[Candidate], k: int) -> list[ContextItem]:
        """The best `k` candidates as context items, with the seeds' consolidated episode
        records returned whole when short enough: a record takes the rank of its best
        source, and its sources leave the k slots to other evidence."""
        top = [c.item() for c in ranked[:k]]
        seeds = [c for c in top if c.episode][: scoring.episode_seeds(k)]
        ids = [
            record_id(
                tenant,
                GroupKey(str(c.episode), c.user_id, c.scope, c.workspace or "", c.project or ""),
            )
            for c in seeds
        ]
        found = await self.res.vectors.get(tenant, ids) if ids else []
        record_of: dict[str, MemoryRecord] = {}
        for p in found:
            if len(p.payload.get("text", "")) <= self.settings.episode_record_max_chars:
                whole = MemoryRecord.from_payload(p.payload)
                record_of.update({s: whole for s in whole.metadata.get("sources", [])})
        if not record_of:
            return top
        out: list[ContextItem] = []
        emitted: set[str] = set()
        for i, cand in enumerate(ranked):
            rec = record_of.get(cand.hit.id)
            if rec is None:
                out.append(top[i] if i < len(top) else cand.item())
            elif rec.id not in emitted:
                emitted.add(rec.id)
                item = context_item(
                    rec, score=cand.score, relevance=cand.rel, strength=cand.strength
                )
                item.terms = cand.terms  # the record stands in for the ranked memory
                out.append(item)
            if len(out) == k:
                break
        return out

    def seeds(self, top: list[ContextItem], k: int, links: dict[str, float]) -> list[ContextItem]:
        """The best `episode_seeds(k)` memories, then `graph_seeds` more: the best-ranked
        graph-linked ones (a memory naming the query's rare entity often sits next to the
        turn that answers), topped up with the next-ranked ones."""
        cands = [c for c in top if c.episode]
        n = scoring.episode_seeds(k)
        seeds, rest = cands[:n], cands[n:]
        extra = self.settings.graph_seeds
        linked = [c for c in rest if c.memory_id in links][:extra]
        chosen = {c.memory_id for c in linked}
        others = [c for c in rest if c.memory_id not in chosen][: extra - len(linked)]
        return seeds + linked + others

    async def _tie_breaks(
        self, tenant: str, lines: list[list[tuple[str, float]]]
    ) -> dict[str, int]:
        """The `seq` of the memories that share their `created_ts` with another in the same
        timeline (a session replayed at one instant); an empty read when none does."""
        tied: list[str] = []
        for line in lines:
            count = Counter(ts for _, ts in line)
            tied += [pid for pid, ts in line if count[ts] > 1]
        if not tied:
            return {}
        points = await self.res.vectors.get(tenant, tied, fields=("seq",))
        return {p.id: int(p.payload.get("seq") or 0) for p in points}

    async def around(
        self,
        tenant: str,
        top: list[ContextItem],
        k: int,
        exclude: set[str],
        visible: Filter,
        now: datetime,
        links: dict[str, float] | None = None,
        plan: tuple[list[ContextItem], int] | None = None,
    ) -> list[ContextItem]:
        """Up to `episode_neighbours` memories on each side of the seeds (`seeds`), from
        the same episode and within the window, in time order, not already in the answer,
        and visible to the request (an episode id does not cross scopes or users). Of the
        best-ranked `episode_answer_seeds` memories, one that asks a question also brings
        the memory after it (its answer: "Sure, I'll bring it tomorrow" names nothing the
        query does). `plan` (precise mode): the seeds and their neighbours on each side
        instead, and only those seeds may bring an answer."""
        window = timedelta(minutes=self.settings.episode_window_min).total_seconds()
        spans, by_episode = self._spans(top, k, links or {}, plan)
        # The episodes' timelines in one batch: ids in time order, no payloads (a payload
        # read is ~35-50 us per point, and a window holds ~5x the neighbours kept).
        lines = await self.res.vectors.timelines(
            tenant,
            [_window_of(e, g, visible, window) for e, g in by_episode.items()],
            key="created_ts",
            limit=EPISODE_SCAN,
        )
        seq_of = await self._tie_breaks(tenant, lines)
        chosen = _neighbours(by_episode, lines, spans, seq_of, exclude, window)
        # Only the chosen neighbours are read whole.
        out: dict[str, ContextItem] = {}
        for p in await self.res.vectors.get(tenant, list(chosen)) if chosen else []:
            r = ItemView.model_validate(p.payload)
            out[r.id] = context_item(r, score=0.0, relevance=0.0, strength=strength_at(p, now))
        return sorted(out.values(), key=lambda c: (c.created_at, c.seq))

    def _spans(
        self,
        top: list[ContextItem],
        k: int,
        links: dict[str, float],
        plan: tuple[list[ContextItem], int] | None,
    ) -> tuple[dict[str, tuple[int, int]], dict[str, list[ContextItem]]]:
        """Each seed's neighbours before and after (a question among the best-ranked brings
        the memory after it), and the seeds grouped by episode."""
        n = self.settings.episode_neighbours
        linked_n = self.settings.graph_seed_neighbours
        # Seed -> (neighbours before, neighbours after).
        spans: dict[str, tuple[int, int]] = {}
        by_episode: dict[str, list[ContextItem]] = defaultdict(list)
        seeds = plan[0] if plan else self.seeds(top, k, links)
        for seed in seeds:
            m = plan[1] if plan else linked_n if seed.memory_id in links else n
            spans[seed.memory_id] = (m, m)
            by_episode[str(seed.episode)].append(seed)
        for c in [] if plan else top[: self.settings.episode_answer_seeds]:
            if c.episode and c.memory_id not in spans and asks(c.text):
                spans[c.memory_id] = (0, 1)
                by_episode[str(c.episode)].append(c)
        return spans, by_episode


def _window_of(episode: str, group: list[ContextItem], visible: Filter, window: float) -> Filter:
    """One read per episode covering every seed's window. The episode's consolidated record
    shares its episode and time: without the must_not it sorts in among the turns and a
    whole session rides in as a "neighbour"."""
    times = [s.created_at.timestamp() for s in group]
    lo, hi = visible.ranges.get("created_ts", (None, None))
    span = (
        max(min(times) - window, lo if lo is not None else -math.inf),
        min(max(times) + window, hi if hi is not None else math.inf),
    )
    return Filter(
        must={**visible.must, "episode": episode},
        must_not={**visible.must_not, "source": "consolidation"},
        ranges={**visible.ranges, "created_ts": span},
        should=list(visible.should),
    )


def _neighbours(
    by_episode: dict[str, list[ContextItem]],
    lines: list[list[tuple[str, float]]],
    spans: dict[str, tuple[int, int]],
    seq_of: dict[str, int],
    taken: set[str],
    window: float,
) -> dict[str, None]:
    """The neighbours chosen on each seed's timeline (in order, each once): within its
    span of positions and the window of time, and not in `taken`."""
    chosen: dict[str, None] = {}
    for group, line in zip(by_episode.values(), lines, strict=True):
        # Memories saved at the same instant keep their ingest order (seq).
        line.sort(key=lambda x: (x[1], seq_of.get(x[0], 0)))
        position = {pid: i for i, (pid, _) in enumerate(line)}
        for seed in group:
            i = position.get(seed.memory_id)
            if i is None:
                continue
            t = seed.created_at.timestamp()
            before, after = spans[seed.memory_id]
            for pid, ts in line[max(0, i - before) : i] + line[i + 1 : i + 1 + after]:
                if pid in taken or pid in chosen or abs(ts - t) > window:
                    continue
                chosen[pid] = None
    return chosen


def pinned_item(p: ScoredPoint, now: datetime) -> ContextItem:
    """A pinned memory of the asker's context: delivered whole, whatever the query."""
    rec = MemoryRecord.from_payload(p.payload)
    s = rec.strength.at(now, rec.pinned)
    return context_item(rec, score=1.0, relevance=1.0, strength=s)


def asks(text: str) -> bool:
    """Whether a memory ends by asking (a closing quote mark after the "?" still counts)."""
    return text.rstrip().rstrip("\"'\u201d\u2019").endswith("?")
