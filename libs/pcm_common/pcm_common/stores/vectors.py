"""Vector store port: what PCM needs from Qdrant, independent of the client library.

Adapters: `qdrant.edge.store.EdgeVectorStore` (in-process Qdrant Edge shard, the embedded
default) and `qdrant.server.ServerVectorStore` (qdrant-client against a server or its
embedded local mode). Every method takes the tenant and filters on it: a tenant never sees
another tenant's points.
"""

from __future__ import annotations

import asyncio
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

# Re-exported: the filter type every adapter takes, and its in-process evaluation.
from pcm_common.domain.filters import Filter as Filter
from pcm_common.domain.filters import payload_matches as payload_matches
from pcm_common.runtime.telemetry import FAMILY_SEARCHES

# Payload fields that filters use; adapters create a payload index on each.
KEYWORD_INDEXES = (
    "tenant",
    "user_id",
    "scope",
    "workspace",
    "project",
    "text_hash",
    "state",
    "episode",
    "source",
    "importance",
    "surprisal.family_ids",  # anomaly flags find families of recalled memories by this
    "figures_key",  # near duplicates state the same figures (`domain.figures`)
    "kind",  # episode records and distilled facts (`domain.memory.MemoryRecord.kind`)
    "sources",  # a deleted memory's facts (`data.derived_facts`)
)
BOOL_INDEXES = ("pinned", "graph.extracted")
FLOAT_INDEXES = ("created_ts", "strength.s_ref", "surprisal.score")
# A memory's creation time in epoch seconds (`SearchQuery.created_until` cuts on it).
CREATED_FIELD = "created_ts"


@dataclass(frozen=True)
class SparseVec:
    indices: list[int]
    values: list[float]


@dataclass
class VectorPoint:
    id: str
    vector: list[float]
    payload: dict[str, Any]
    sparse: SparseVec | None = None


@dataclass
class ScoredPoint:
    id: str
    score: float  # cosine to the query vector (0 for plain reads)
    payload: dict[str, Any]
    vector: list[float] | None = None
    fused: float | None = None  # reciprocal-rank-fusion score of a hybrid search


@dataclass(frozen=True)
class SearchQuery:
    """One dense search of a batch (`VectorStore.search_many`)."""

    tenant: str
    vector: list[float]
    limit: int
    flt: Filter | None = None
    with_vectors: bool = False
    # Only hits with cosine >= this (None: any): a store that can leaves the others out
    # before reading their payloads.
    min_score: float | None = None
    # Only points with `created_ts` <= this (epoch seconds; None: any): the adapter plans
    # how (the Edge adapter: `qdrant.edge.created_until`).
    created_until: float | None = None

    def keeps(self, score: float) -> bool:
        """Whether a hit of this `score` is one of the query's (`min_score`)."""
        return self.min_score is None or score >= self.min_score

    def ranged(self) -> SearchQuery:
        """This query with its `created_until` as a range on `created_ts` (inclusive),
        the plain search every adapter can run."""
        if self.created_until is None:
            return self
        flt = self.flt or Filter()
        low, high = flt.ranges.get(CREATED_FIELD, (None, None))
        cut = self.created_until if high is None else min(high, self.created_until)
        ranges = {**flt.ranges, CREATED_FIELD: (low, cut)}
        return dataclasses.replace(
            self, flt=dataclasses.replace(flt, ranges=ranges), created_until=None
        )


@dataclass(frozen=True)
class DuplicateQuery:
    """One lookup of `VectorStore.near_duplicates`: the nearest point among `flt`'s with
    cosine >= `min_score` that states the same `figures` (`domain.figures`)."""

    tenant: str
    vector: list[float]
    figures: list[str]
    flt: Filter  # without `should`: the lookup uses it
    min_score: float


@dataclass(frozen=True)
class Capabilities:
    """What a store does cheaply, and is doing now (`VectorStore.capabilities`): reported,
    and read by the adapter's own query planning; services never branch on it."""

    # A range condition costs a batch search no more than keyword conditions (the Edge
    # adapter then asks `created_until` as the range alone).
    cheap_ranges: bool = False
    # An index build this process started is running (`/v1/pipeline` reports it; a server
    # indexes on its own and says False).
    indexing: bool = False


def reject_tenant_moves(tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """The port's rule for payload writes: a patch never moves a point to another tenant."""
    if any("tenant" in p and p["tenant"] != tenant for _, p in patches):
        raise ValueError("set_payload cannot move a point to another tenant")


def usable_vector(vector: list[float] | None, dim: int) -> bool:
    """A stored dense vector that can be compared: `dim` long and not all zeros (what the
    sweeper's repair job re-embeds)."""
    return bool(vector) and len(vector or []) == dim and any(abs(x) > 1e-12 for x in vector or [])


def only_fields(payload: dict[str, Any], fields: Sequence[str] | None) -> dict[str, Any]:
    """`payload` cut down to `fields` (top-level keys; None keeps everything)."""
    return payload if fields is None else {k: payload[k] for k in fields if k in payload}


class VectorStore(ABC):
    """Port for memory points: dense vector (+ optional sparse lexical vector) and payload.

    `fields` of the reads (get, search, search_many, scroll, scroll_many): the top-level
    payload fields to return; None returns the whole payload, an empty list none (ids and
    scores only). Adapters ask the engine for just those: reading payloads nobody uses was
    most of a small search's cost (docs/decisions/0043-edge-payload-reads.md).
    """

    @abstractmethod
    async def ensure_collection(self) -> None:
        """Create the collection, named vectors and payload indexes if missing (idempotent)."""

    async def embedding_model(self) -> str | None:
        """The embedding model recorded for this store's vectors (None: none recorded, or
        a store that cannot record one). Vectors of two models do not compare, so a
        service configured with another refuses to start (`Resources.open_vectors`)."""
        return None

    async def claim_embedding_model(self, model: str) -> str | None:
        """Record `model` as the embedding model of this store's vectors unless one is
        recorded already; returns the one recorded before (None: none was)."""
        return None

    async def sample(self, n: int) -> list[ScoredPoint]:
        """Up to `n` stored points of any tenant, with their `text` and their
        dense vectors: what a service compares its embedding model against on a store that
        recorded none (made before models were recorded). Never for answering clients."""
        return []

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The tenant of each of `ids` the store holds, whichever tenant (an id it does not
        hold is absent): what an import checks before it keeps a memory's id, so that it
        never replaces another tenant's point. Never for answering clients."""
        raise NotImplementedError(f"{type(self).__name__} cannot tell the owners of points")

    # ---- moving to another embedding model (`pcm_common.data.reembed`) ---------------

    async def scroll_all(
        self, *, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        """A page of every tenant's points, whole payloads and no vectors, in id order;
        returns (points, next offset or None). What re-embedding copies; never for
        answering clients."""
        raise NotImplementedError(f"{type(self).__name__} cannot read across tenants")

    def beside(self, name: str, dim: int) -> VectorStore:
        """A separate store of the same kind next to this one (a sibling shard, another
        collection of the same server), told apart by `name`, for vectors of `dim`: where
        re-embedding builds the new vectors while this store keeps serving."""
        raise NotImplementedError(f"{type(self).__name__} cannot make a store beside it")

    async def replace_with(self, other: VectorStore) -> None:
        """Make `other` (made by `beside`) this store's contents, where it stands: calls
        made after this returns see `other`'s points, and this store's old points and
        vectors are removed. `other` is not to be used after."""
        raise NotImplementedError(f"{type(self).__name__} cannot be replaced")

    async def drop(self) -> None:
        """Remove this store and everything in it (a `beside` store given up)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be dropped")

    @property
    def backend(self) -> str:
        """The adapter that holds the points (what `/readyz` reports)."""
        return type(self).__name__

    def capabilities(self, tenant: str | None = None) -> Capabilities:
        """What this store does cheaply for `tenant`'s searches (None: for a tenant it
        knows nothing of), and whether it is indexing. Reading them opens nothing."""
        return Capabilities()

    @abstractmethod
    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points; durable when this returns."""

    @abstractmethod
    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        """Points by id that belong to `tenant` (others are silently absent); score is 0."""

    @abstractmethod
    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        """Merge `patch` into the payload (top-level keys replaced); False if not this tenant's."""

    async def set_payload_many(
        self, tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[bool]:
        """`set_payload` for each (point id, patch), in order; one result per patch. An
        adapter that can writes them in one call (consumers mark a whole batch)."""
        return [await self.set_payload(tenant, pid, patch) for pid, patch in patches]

    @abstractmethod
    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        """Delete this tenant's points among `ids`; returns how many were deleted."""

    @abstractmethod
    async def search(
        self,
        tenant: str,
        vector: list[float],
        *,
        limit: int,
        flt: Filter | None = None,
        sparse: SparseVec | None = None,
        with_vectors: bool = False,
        fusion_k: int = 60,
        prefetch: int | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        """Nearest points by cosine (score = cosine similarity), best first.

        With `sparse`, the best `prefetch` dense and `prefetch` sparse candidates are fused
        inside Qdrant by reciprocal rank fusion with constant `fusion_k`; results come in
        fused order with `fused` set, and `score` stays the dense cosine so relevance
        thresholds keep their meaning.
        """

    async def search_many(
        self,
        queries: Sequence[SearchQuery],
        *,
        fields: Sequence[str] | None = None,
        concurrency: int = 4,
    ) -> list[list[ScoredPoint]]:
        """Dense searches (as `search` without `sparse`), one result list per query, in
        order. `fields`: the top-level payload fields to return (None: all; empty: none).
        A query's `created_until` is asked as a range (`SearchQuery.ranged`); an adapter
        whose ranges are dear plans it its own way. The searches run by `_search_batch`."""
        cut = sum(1 for q in queries if q.created_until is not None and q.limit > 0)
        FAMILY_SEARCHES.labels(search="ranged").inc(cut)
        return await self._search_batch([q.ranged() for q in queries], fields, concurrency)

    async def near_duplicates(
        self,
        queries: Sequence[DuplicateQuery],
        *,
        fields: Sequence[str] = (),
        concurrency: int = 4,
    ) -> list[ScoredPoint | None]:
        """For each query, its near duplicate (None: none), searched as batches
        (`search_many`); a hit's payload holds `fields` and `figures`. How the figures
        are filtered on is the store's business (`stores.near_duplicates`)."""
        # Imported here: that module builds its searches from this one's types.
        from pcm_common.stores import near_duplicates

        return await near_duplicates.nearest(self, queries, fields, concurrency)

    async def _search_batch(
        self, queries: Sequence[SearchQuery], fields: Sequence[str] | None, concurrency: int
    ) -> list[list[ScoredPoint]]:
        """Plain dense searches for `search_many` (no `created_until`). An adapter that can
        runs them as one batch; this default runs up to `concurrency` at once."""
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(q: SearchQuery) -> list[ScoredPoint]:
            async with gate:
                hits = await self.search(
                    q.tenant,
                    q.vector,
                    limit=q.limit,
                    flt=q.flt,
                    with_vectors=q.with_vectors,
                    fields=fields,
                )
                return [h for h in hits if q.keeps(h.score)]

        return list(await asyncio.gather(*(one(q) for q in queries)))

    @abstractmethod
    async def scroll(
        self,
        tenant: str,
        *,
        flt: Filter | None = None,
        limit: int = 100,
        offset: str | None = None,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> tuple[list[ScoredPoint], str | None]:
        """Page through this tenant's points; returns (points, next offset or None)."""

    async def pages(
        self,
        tenant: str,
        *,
        flt: Filter | None = None,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
        size: int = 256,
    ) -> AsyncIterator[list[ScoredPoint]]:
        """Every point of `tenant` matching `flt`, `size` at a time (`scroll` to the end):
        what the sweeper's whole-tenant jobs read."""
        offset: str | None = None
        while True:
            points, offset = await self.scroll(
                tenant,
                flt=flt,
                limit=size,
                offset=offset,
                with_vectors=with_vectors,
                fields=fields,
            )
            yield points
            if offset is None:
                return

    async def scroll_many(
        self,
        tenant: str,
        filters: Sequence[Filter],
        *,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[list[ScoredPoint]]:
        """The first page (`limit` points, no vectors) of `scroll` for each filter, in
        order. An adapter that can reads them all in one call; this default overlaps them."""
        pages = await asyncio.gather(
            *(self.scroll(tenant, flt=f, limit=limit, fields=fields) for f in filters)
        )
        return [points for points, _ in pages]

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        """For each filter, the (id, value of `key`) of its first `limit` points in
        ascending order of the numeric payload field `key` (one with a range index), and
        no payloads: reading a payload costs far more than ids in order
        (docs/decisions/0043-edge-payload-reads.md). This default pages
        through `scroll` and sorts; an adapter that can asks the engine for the order."""
        out: list[list[tuple[str, float]]] = []
        for flt in filters:
            points: list[ScoredPoint] = []
            offset: str | None = None
            while True:
                page, offset = await self.scroll(
                    tenant, flt=flt, limit=256, offset=offset, fields=(key,)
                )
                points += [p for p in page if isinstance(p.payload.get(key), (int, float))]
                if offset is None:
                    break
            points.sort(key=lambda p: float(p.payload[key]))
            out.append([(p.id, float(p.payload[key])) for p in points[:limit]])
        return out

    async def fold_strengths(self, tenant: str) -> int:
        """Write strength updates held outside the payloads into them; returns how many.
        Adapters write strengths into the payloads directly: nothing to fold
        (`strength_overlay.StrengthOverlayStore` holds them in Redis)."""
        return 0

    @abstractmethod
    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        """Number of this tenant's points matching `flt`."""

    @abstractmethod
    async def close(self) -> None:
        """Flush and release resources."""
