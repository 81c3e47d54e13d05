"""Graph links for recall (DESIGN §3 score term 0.15·ℓ, whitepaper §2.6).

query text -> candidate entity keys (the query's word n-grams and their base forms,
``pcm_common.extract.query``; or the graph's extractor, LRU-cached per query text) -> ONE
round trip to the graph, which keeps the keys it has, bounded by a timeout ->
{memory_id: ℓ ∈ [0, 1]}. The tenant's memory count N (for the weights below) comes from
the memory store (``count``, the system of record), at most once a minute per tenant and
alongside the lookup: counting in the graph scanned every memory node and was a second
graph query.

The n-gram path is the default: it costs microseconds, where the extractor's parse costs
tens of milliseconds and, in an all-in-one process, waits behind the extractor's own
batches for the one spaCy pipeline; its links are as good as the parse's. Why both:
docs/decisions/0021-graph-query-ngram-keys.md.

Meant to run in parallel with the query embedding::

    task = asyncio.create_task(linker.links(tenant, req.query))
    qvec = await embedder.embed_query(req.query)
    ...
    graph = await task          # never raises; graph.ok False when degraded

Link strength. A query entity ``e`` found in the graph weighs ``idf(e) = ln(1 + N/df(e))``
(N memories in the tenant, df(e) of them mention e), and a memory's link strength is the
share of the query's entity weight it mentions:

    ℓ(m) = Σ_{e ∈ Q ∩ E(m)} idf(e) / Σ_{e ∈ Q} idf(e)

so a memory sharing the query's rare entities links strongly and one sharing only a name
that half the conversation mentions ("Caroline") links weakly. Entities mentioned by more
than ``max_df`` memories (an absolute cap, or a share of N) count in the denominator but link
nothing: they would flood the candidate pool. At most ``max_links`` memories are returned,
strongest first, and none below ``min_link``.

Degradation: if extraction fails, the graph is down, or it does not answer within
``timeout_s``, the result is empty with ``ok=False`` and the reason (recall reports it in its
timings and answers without the graph). After a failure the graph is skipped for
``cooldown_s``, so a dead graph does not cost every recall a full timeout.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pcm_common.extract import Extractor
from pcm_common.extract.query import query_keys, query_types
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.graph.port import EntityLinks, GraphStore
from pcm_common.stores.graph.schema import ENTITY_TYPES
from pcm_common.stores.vectors import Filter, ScoredPoint, VectorStore, payload_matches

log = get_logger("recall.graph")

# Entity types that say what a query is about. Time entities ("May 2023") are left out:
# the date is in every memory's created_at, and a date string rarely names an event.
LINK_TYPES = ENTITY_TYPES - {"Time"}


@dataclass
class GraphLinks:
    links: dict[str, float] = field(default_factory=dict)  # memory_id -> ℓ, strongest first
    ok: bool = True  # False: graph slow/down or extraction failed; links is empty
    reason: str = ""  # why not ok ("timeout", "error: ...", "cooldown")
    entities: list[str] = field(default_factory=list)  # query entity keys looked up
    ms: float = 0.0  # time spent (extraction + graph)
    # How many links recall keeps (`closest`); `links` may hold more, tied at the cut.
    cap: int = 0

    def closest(self, cosines: Mapping[str, float]) -> dict[str, float]:
        """The `cap` strongest links, equal strengths going to the memories closer to the
        query (`cosines`; one the caller cannot see comes last): memory ids are random, so
        ties broken by id differ between stores with the same content
        (docs/decisions/0048-graph-link-ties.md)."""
        if not self.cap or len(self.links) <= self.cap:
            return self.links
        ranked = sorted(
            self.links.items(), key=lambda kv: (-kv[1], -cosines.get(kv[0], -2.0), kv[0])
        )
        return dict(ranked[: self.cap])

    def timings(self) -> dict[str, float]:
        """Entries for RecallOut.timings_ms (numbers only)."""
        return {
            "graph": round(self.ms, 3),
            "graph_ok": 1.0 if self.ok else 0.0,
            "graph_links": float(len(self.links)),
        }


def link_strengths(
    total: int,
    found: Sequence[EntityLinks],
    *,
    max_links: int,
    min_link: float = 0.0,
    also: Mapping[str, Iterable[tuple[str, str]]] | None = None,
    tie_room: int = 0,
) -> dict[str, float]:
    """ℓ per memory from one ``entity_links`` answer (pure: shared with the offline eval).

    ``also``: for memories linked through a rare entity, the broad query entities
    ((type, key), no ids in ``found``) they mention too (``broad_mentions``); those add
    their weight, so of the memories naming "pottery" the ones that also name the query's
    "Melanie" link stronger. A broad entity still links nothing on its own.

    ``tie_room``: up to this many more memories as strong as the last one kept are returned
    too, for the caller to break the tie on something better than the memory id
    (``GraphLinks.closest``)."""
    if total <= 0 or not found:
        return {}
    weights = {(e.type, e.key): math.log1p(total / max(1, e.df)) for e in found}
    denom = sum(weights.values())
    if denom <= 0:
        return {}
    score: dict[str, float] = {}
    for e in found:
        w = weights[(e.type, e.key)]
        for mid in e.memory_ids:
            score[mid] = score.get(mid, 0.0) + w
    for mid, ents in (also or {}).items():
        if mid in score:
            score[mid] += sum(weights.get(te, 0.0) for te in set(ents))
    ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = ranked[:max_links]
    if tie_room > 0 and kept:
        last = kept[-1][1]
        kept += [kv for kv in ranked[max_links : max_links + tie_room] if kv[1] == last]
    out: dict[str, float] = {}
    for mid, s in kept:
        ell = min(1.0, s / denom)
        if ell >= min_link:
            out[mid] = round(ell, 6)
    return out


class GraphLinker:
    def __init__(
        self,
        graph: GraphStore,
        extractor: Extractor | None,
        *,
        count: Callable[[str], Awaitable[int]],
        timeout_s: float = 0.5,
        max_links: int = 20,
        max_df: int = 50,
        max_df_share: float = 0.05,
        min_link: float = 0.0,
        cache_size: int = 2048,
        cooldown_s: float = 5.0,
        link_types: Iterable[str] = LINK_TYPES,
        ngrams: bool = True,
        total_ttl_s: float = 60.0,
        also_pool: int | None = None,
        typed: bool = True,
        typed_max_df: int = 500,
    ) -> None:
        self.graph = graph
        self.extractor = extractor
        self.timeout_s = timeout_s
        self.max_links = max_links
        self.max_df = max_df
        self.max_df_share = max_df_share
        self.min_link = min_link
        self.cooldown_s = cooldown_s
        self.link_types = frozenset(link_types)
        self.ngrams = ngrams
        self.count = count
        # Candidates weighed by the query's broad entities they name (default 3 × max_links).
        self.also_pool = also_pool or 3 * max_links
        # Type words in the query ("which cities ...") ask for the memories that name one
        # of its entities and an entity of that type; entities in more memories than
        # `typed_max_df` are not walked (the graph's cost grows with their df).
        self.typed = typed
        self.typed_max_df = typed_max_df
        self._cache: OrderedDict[str, list[str]] = OrderedDict()
        self._cache_size = cache_size
        self._down_until = 0.0
        # Memories per tenant (N of the idf weights and the df share cap), re-counted at most
        # every `total_ttl_s`: the weights barely move with N, the count costs a scan.
        self.total_ttl_s = total_ttl_s
        self._totals: OrderedDict[str, tuple[int, float]] = OrderedDict()

    async def query_entities(self, query: str) -> list[str]:
        """Names (or candidate keys) of the query's entities (LRU-cached: recall repeats
        queries)."""
        if self.ngrams or self.extractor is None:
            return query_keys(query)
        hit = self._cache.get(query)
        if hit is not None:
            self._cache.move_to_end(query)
            return hit
        ex = await self.extractor.extract(query)
        names = sorted({e.name for e in ex.entities if e.type in self.link_types})
        self._cache[query] = names
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return names

    async def links(self, tenant: str, query: str) -> GraphLinks:
        """Never raises: a failure or timeout gives ``ok=False`` and no links."""
        t0 = time.perf_counter()
        if time.monotonic() < self._down_until:
            return GraphLinks(ok=False, reason="cooldown")
        names: list[str] = []
        try:
            async with asyncio.timeout(self.timeout_s):
                names = await self.query_entities(query)
                if not names:
                    return GraphLinks(ms=_ms(t0))
                types = query_types(query) if self.typed else []
                lookup = self.graph.entity_links(
                    tenant,
                    names,
                    max_df=self.max_df,
                    types=types,
                    typed_max_df=self.typed_max_df,
                )
                known = self._recent_total(tenant)
                if known is None:
                    total, found = await asyncio.gather(self.count(tenant), lookup)
                    self._remember_total(tenant, total)
                else:
                    total, found = known, await lookup
                usable = self._usable(total, found) + self._typed(total, found, types)
                also = broad_mentions(total, usable, found, pool=self.also_pool)
        except TimeoutError:
            self._down_until = time.monotonic() + self.cooldown_s
            log.warning("graph_links_timeout", tenant=tenant, timeout_s=self.timeout_s)
            return GraphLinks(ok=False, reason="timeout", entities=names, ms=_ms(t0))
        except Exception as exc:  # graph down, extractor failure: recall goes on without
            self._down_until = time.monotonic() + self.cooldown_s
            log.warning("graph_links_failed", tenant=tenant, error=repr(exc))
            return GraphLinks(ok=False, reason=f"error: {exc!r}"[:200], entities=names, ms=_ms(t0))
        links = link_strengths(
            total,
            usable,
            max_links=self.max_links,
            min_link=self.min_link,
            also=also,
            tie_room=2 * self.max_links,
        )
        return GraphLinks(
            links=links, entities=[e.key for e in usable], ms=_ms(t0), cap=self.max_links
        )

    def _cap(self, total: int) -> int:
        """The most memories a link entity may name and still link them."""
        return max(1, min(self.max_df, math.ceil(self.max_df_share * total)))

    def _usable(self, total: int, found: Sequence[EntityLinks]) -> list[EntityLinks]:
        """Link-type entities; those above the df cap keep their df but lose their ids."""
        cap = self._cap(total)
        return [
            e if e.df <= cap else EntityLinks(e.key, e.type, e.df, ())
            for e in found
            if e.type in self.link_types
        ]

    def _typed(
        self, total: int, found: Sequence[EntityLinks], types: Sequence[str]
    ) -> list[EntityLinks]:
        """The memories naming one of the query's entities and an entity of a type the
        query asks for, as one more link entity: weighed like an entity by how few they
        are, and linking nothing when they are too many to be specific (the df cap)."""
        mids = tuple(dict.fromkeys(m for e in found if e.type in self.link_types for m in e.typed))
        if not types or not mids or len(mids) > self._cap(total):
            return []
        return [EntityLinks(f"type:{'|'.join(types)}", "|".join(types), len(mids), mids)]

    def _recent_total(self, tenant: str) -> int | None:
        hit = self._totals.get(tenant)
        if hit is None or time.monotonic() >= hit[1]:
            return None
        return hit[0]

    def _remember_total(self, tenant: str, total: int) -> None:
        self._totals[tenant] = (total, time.monotonic() + self.total_ttl_s)
        self._totals.move_to_end(tenant)
        if len(self._totals) > self._cache_size:
            self._totals.popitem(last=False)


def broad_mentions(
    total: int, usable: Sequence[EntityLinks], found: Sequence[EntityLinks], *, pool: int
) -> dict[str, set[tuple[str, str]]]:
    """Which of the ``pool`` strongest candidates also name the query's broad entities
    (those in ``usable`` without ids), from the lookup's own answer: a memory linked
    through a rare entity lists the other query entities it names in that entity's ``co``;
    one linked through the typed walk of a broad entity names that entity. (A typed
    memory's other broad entities show up in their own ``typed`` lists, except those too
    broad to walk at all, above the typed cap.) Empty unless the query has both kinds."""
    broad = {(e.type, e.key) for e in usable if not e.memory_ids}
    if not broad or len(broad) == len(usable):
        return {}
    first = link_strengths(total, usable, max_links=pool)
    also: dict[str, set[tuple[str, str]]] = {}
    for e in found:
        for mid, etype, key in e.co:
            if mid in first and (etype, key) in broad:
                also.setdefault(mid, set()).add((etype, key))
        if (e.type, e.key) in broad:
            for mid in e.typed:
                if mid in first:
                    also.setdefault(mid, set()).add((e.type, e.key))
    return also


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


# -- joining the candidate pool ---------------------------------------------------------


async def fetch_linked(
    vectors: VectorStore,
    tenant: str,
    query_vec: Sequence[float],
    links: dict[str, float],
    *,
    exclude: set[str],
    visible: Filter | Callable[[dict[str, Any]], bool],
) -> list[ScoredPoint]:
    """Linked memories not already among the vector candidates, as ScoredPoints whose
    score is their exact cosine to the query (so relevance keeps its meaning). One ``get``
    by id; points the caller may not see (scope, state, user) are dropped."""
    ids = [m for m in links if m not in exclude]
    if not ids:
        return []
    check = visible if callable(visible) else (lambda p, f=visible: payload_matches(f, p))
    got = await vectors.get(tenant, ids, with_vectors=True)
    points = [p for p in got if check(p.payload) and p.vector]
    if not points:
        return []
    # One matrix product: ties at the link cap can bring up to three times max_links here,
    # and a Python loop costs ~70 µs per 384-dim vector.
    mat = np.asarray([p.vector for p in points], dtype=np.float64)
    q = np.asarray(query_vec, dtype=np.float64)
    norms = np.linalg.norm(mat, axis=1) * (np.linalg.norm(q) or 1.0)
    cosines = (mat @ q) / np.where(norms > 0, norms, 1.0)
    return [
        ScoredPoint(id=p.id, score=float(c), payload=p.payload)
        for p, c in zip(points, cosines, strict=True)
    ]
