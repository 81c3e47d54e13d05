"""Vector store adapter over a Qdrant server through `qdrant_client.AsyncQdrantClient`.

Production runs this against a Qdrant server; tests use qdrant-client's embedded local
mode (`location=":memory:"` or `path=`), which serves the same API (it ignores payload
indexes and searches by brute force). Same named vectors, indexes, filters and fusion as
the Edge adapter (the search shaped for both by `qdrant.query`), so the two are
interchangeable behind `VectorStore`.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from typing import Any

import structlog
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from pcm_common.stores.qdrant.common import (
    DENSE,
    SPARSE,
    dense_of,
    is_uuid,
    keep_fused_report_cosine,
)
from pcm_common.stores.qdrant.query import RRF_K, build, plan_search
from pcm_common.stores.qdrant.server_filters import DIALECT, selector, tenant_cond, to_qdrant_filter
from pcm_common.stores.qdrant.sharding import shard_key_of, shard_keys
from pcm_common.stores.vectors import (
    BOOL_INDEXES,
    FLOAT_INDEXES,
    KEYWORD_INDEXES,
    Filter,
    ScoredPoint,
    SparseVec,
    VectorPoint,
    VectorStore,
    only_fields,
    reject_tenant_moves,
)

# The collection metadata key naming the embedding model of its vectors.
META_MODEL = "pcm_embedding_model"
log = structlog.get_logger("vectors")


class ServerVectorStore(VectorStore):
    """Collection `collection` on a Qdrant server (or qdrant-client local mode)."""

    def __init__(
        self,
        url: str = "",
        api_key: str = "",
        collection: str = "pcm_memories",
        dim: int = 384,
        location: str | None = None,
        path: str | None = None,
        shard_groups: int = 0,
    ) -> None:
        self.collection = collection
        self.dim = dim
        # Custom sharding by tenant (`sharding`): every call that names a tenant names its
        # shard key. Local mode takes the argument and ignores it (it keeps no shards).
        self.shard_groups = shard_groups
        # What the setting asks for; `shard_groups` is what the collection in use takes (0
        # on a collection made without custom sharding, until a re-embedding replaces it).
        self._wanted_groups = shard_groups
        self._local = location is not None or path is not None
        # A store made `beside` another shares its client (and does not close it): one
        # local-mode instance holds both collections, and the alias switch needs both.
        self._owns_client = True
        if self._local:
            self._client = AsyncQdrantClient(location=location, path=path)
        else:
            self._client = AsyncQdrantClient(url=url or None, api_key=api_key or None)

    def _shard(self, tenant: str) -> dict[str, Any]:
        """The shard key argument of a call on `tenant`'s points (none when unsharded)."""
        key = shard_key_of(tenant, self.shard_groups)
        return {} if key is None else {"shard_key_selector": key}

    async def ensure_collection(self) -> None:
        if not await self._client.collection_exists(self.collection):
            try:
                await self._client.create_collection(
                    self.collection,
                    vectors_config={
                        DENSE: models.VectorParams(size=self.dim, distance=models.Distance.COSINE)
                    },
                    sparse_vectors_config={
                        SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                    },
                    hnsw_config=models.HnswConfigDiff(m=16, ef_construct=100),
                    sharding_method=models.ShardingMethod.CUSTOM if self.shard_groups else None,
                )
            except (UnexpectedResponse, ValueError):
                # Another replica created it between the check and the create.
                if not await self._client.collection_exists(self.collection):
                    raise
        await self._ensure_shard_keys()
        indexes: list[tuple[str, Any]] = [
            (
                name,
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
                if name == "tenant"
                else models.PayloadSchemaType.KEYWORD,
            )
            for name in KEYWORD_INDEXES
        ]
        indexes += [(n, models.PayloadSchemaType.BOOL) for n in BOOL_INDEXES]
        indexes += [(n, models.PayloadSchemaType.FLOAT) for n in FLOAT_INDEXES]
        with warnings.catch_warnings():
            # Local mode warns that payload indexes have no effect there; expected.
            warnings.simplefilter("ignore", UserWarning)
            for name, schema in indexes:
                # Idempotent on the server: an existing identical index is kept.
                await self._client.create_payload_index(
                    self.collection, name, field_schema=schema, wait=True
                )

    async def _ensure_shard_keys(self) -> None:
        """The collection's shard keys, made once. A collection made without custom sharding
        cannot take them (its points cannot move in place): it is served unsharded, and a
        re-embedding builds its successor sharded. A custom-sharded collection needs the
        setting: its writes must name a shard key."""
        if self._local:
            return  # local mode keeps no shards: the shard key arguments are ignored there
        info = await self._client.get_collection(self.collection)
        custom = info.config.params.sharding_method == models.ShardingMethod.CUSTOM
        if custom and not self.shard_groups:
            raise ValueError(
                f"collection {self.collection} is sharded by tenant: set "
                "PCM_QDRANT_SHARD_GROUPS to the number it was made with (docs/cluster.md)"
            )
        if not custom:
            if self.shard_groups:
                log.warning(
                    "qdrant_collection_not_sharded",
                    collection=self.collection,
                    hint="served unsharded; re-embedding builds a sharded one",
                )
            self.shard_groups = 0
            return
        for key in shard_keys(self.shard_groups):
            try:
                await self._client.create_shard_key(self.collection, key)
            except UnexpectedResponse as exc:
                if "already exists" not in str(exc):
                    raise

    async def embedding_model(self) -> str | None:
        """Kept in the collection's metadata (Qdrant 1.16+; an older server keeps none)."""
        recorded = (await self._metadata()).get(META_MODEL)
        return recorded if isinstance(recorded, str) else None

    async def _metadata(self) -> dict[str, Any]:
        info = await self._client.get_collection(self.collection)
        return dict(getattr(info.config, "metadata", None) or {})

    async def claim_embedding_model(self, model: str) -> str | None:
        meta = await self._metadata()
        recorded = meta.get(META_MODEL)
        if isinstance(recorded, str):
            return recorded
        try:
            await self._client.update_collection(
                self.collection, metadata={**meta, META_MODEL: model}
            )
        except UnexpectedResponse as exc:  # a server without collection metadata
            log.warning("embedding_model_not_recorded", error=repr(exc)[:300])
        return None

    async def sample(self, n: int) -> list[ScoredPoint]:
        records, _ = await self._client.scroll(
            self.collection, limit=n, with_payload=["text"], with_vectors=[DENSE]
        )
        return [
            ScoredPoint(
                id=str(r.id), score=0.0, payload=dict(r.payload or {}), vector=dense_of(r.vector)
            )
            for r in records
        ]

    async def tenants_of(self, ids: Sequence[str]) -> dict[str, str]:
        valid = [i for i in dict.fromkeys(ids) if is_uuid(i)]
        if not valid:
            return {}
        records = await self._client.retrieve(
            self.collection, ids=valid, with_payload=selector(["tenant"]), with_vectors=False
        )
        return {str(r.id): str((r.payload or {}).get("tenant")) for r in records}

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        structs = []
        for p in points:
            if not is_uuid(p.id):
                raise ValueError(f"point id must be a UUID string: {p.id!r}")
            if len(p.vector) != self.dim:
                raise ValueError(f"vector of {p.id} has dim {len(p.vector)}, want {self.dim}")
            if "tenant" not in p.payload:
                raise ValueError(f"payload of {p.id} has no tenant")
            vec: dict[str, Any] = {DENSE: [float(x) for x in p.vector]}
            if p.sparse is not None and p.sparse.indices:
                vec[SPARSE] = models.SparseVector(
                    indices=list(p.sparse.indices), values=list(p.sparse.values)
                )
            structs.append(models.PointStruct(id=p.id, vector=vec, payload=dict(p.payload)))
        if not self.shard_groups:
            await self._client.upsert(self.collection, points=structs, wait=True)
            return
        by_shard: dict[str, list[models.PointStruct]] = {}
        for p, struct in zip(points, structs, strict=True):
            key = shard_key_of(str(p.payload["tenant"]), self.shard_groups)
            by_shard.setdefault(str(key), []).append(struct)
        for key, group in by_shard.items():
            await self._client.upsert(
                self.collection, points=group, wait=True, shard_key_selector=key
            )

    async def _owned(
        self,
        tenant: str,
        ids: Sequence[str],
        with_vectors: bool,
        fields: Sequence[str] | None = None,
    ) -> list[models.Record]:
        """The records of `ids` that belong to `tenant`, with `fields` of their payloads
        and the tenant (read for this check)."""
        valid = [i for i in dict.fromkeys(ids) if is_uuid(i)]
        if not valid:
            return []
        records = await self._client.retrieve(
            self.collection,
            ids=valid,
            with_payload=True if fields is None else selector(["tenant", *fields]),
            with_vectors=[DENSE] if with_vectors else False,
            **self._shard(tenant),
        )
        return [r for r in records if (r.payload or {}).get("tenant") == tenant]

    async def get(
        self,
        tenant: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        strip = fields is not None and "tenant" not in fields
        return [
            ScoredPoint(
                id=str(r.id),
                score=0.0,
                payload=only_fields(dict(r.payload or {}), fields if strip else None),
                vector=dense_of(r.vector) if with_vectors else None,
            )
            for r in await self._owned(tenant, ids, with_vectors, fields)
        ]

    async def set_payload(self, tenant: str, point_id: str, patch: dict[str, Any]) -> bool:
        reject_tenant_moves(tenant, [(point_id, patch)])
        if not await self._owned(tenant, [point_id], False, ()):
            return False
        # The write is filtered on the tenant too, so even a stale check can't cross tenants.
        guard = models.Filter(must=[models.HasIdCondition(has_id=[point_id]), tenant_cond(tenant)])
        await self._client.set_payload(
            self.collection,
            payload=dict(patch),
            points=models.FilterSelector(filter=guard),
            wait=True,
            **self._shard(tenant),
        )
        return True

    async def delete(self, tenant: str, ids: Sequence[str]) -> int:
        owned = [str(r.id) for r in await self._owned(tenant, ids, False, ())]
        if not owned:
            return 0
        guard = models.Filter(must=[models.HasIdCondition(has_id=list(owned)), tenant_cond(tenant)])
        await self._client.delete(
            self.collection,
            points_selector=models.FilterSelector(filter=guard),
            wait=True,
            **self._shard(tenant),
        )
        return len(owned)

    async def search(
        self,
        tenant: str,
        vector: list[float],
        *,
        limit: int,
        flt: Filter | None = None,
        sparse: SparseVec | None = None,
        with_vectors: bool = False,
        fusion_k: int = RRF_K,
        prefetch: int | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[ScoredPoint]:
        if limit <= 0:
            return []
        plan = plan_search(vector, sparse, limit=limit, fusion_k=fusion_k, prefetch=prefetch)
        # Fused scores are rank-based: a hybrid search's dense vectors give back the cosine.
        vectors = [DENSE] if with_vectors or plan.hybrid else False
        request = build(
            plan, DIALECT, to_qdrant_filter(tenant, flt), payload=selector(fields), vectors=vectors
        )
        resp = await self._client.query_points(self.collection, **request, **self._shard(tenant))
        out = [
            ScoredPoint(
                id=str(h.id),
                score=float(h.score),
                payload=dict(h.payload or {}),
                vector=dense_of(h.vector),
            )
            for h in resp.points
        ]
        if plan.hybrid:
            keep_fused_report_cosine(out, plan.dense)
            if not with_vectors:
                for p in out:
                    p.vector = None
        return out

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
        if offset is not None and not is_uuid(offset):
            raise ValueError(f"scroll offset must be a point id: {offset!r}")
        records, next_offset = await self._client.scroll(
            self.collection,
            scroll_filter=to_qdrant_filter(tenant, flt),
            limit=limit,
            offset=offset,
            with_payload=selector(fields),
            with_vectors=[DENSE] if with_vectors else False,
            **self._shard(tenant),
        )
        points = [
            ScoredPoint(
                id=str(r.id),
                score=0.0,
                payload=dict(r.payload or {}),
                vector=dense_of(r.vector) if with_vectors else None,
            )
            for r in records
        ]
        return points, (str(next_offset) if next_offset is not None else None)

    async def timelines(
        self, tenant: str, filters: Sequence[Filter], *, key: str, limit: int
    ) -> list[list[tuple[str, float]]]:
        """Ordered by the server (`order_by` on `key`'s range index), no payloads."""

        async def one(flt: Filter) -> list[tuple[str, float]]:
            records, _ = await self._client.scroll(
                self.collection,
                scroll_filter=to_qdrant_filter(tenant, flt),
                limit=limit,
                with_payload=False,
                with_vectors=False,
                order_by=models.OrderBy(key=key),
                **self._shard(tenant),
            )
            return [(str(r.id), float(r.order_value or 0.0)) for r in records]

        return list(await asyncio.gather(*(one(f) for f in filters)))

    async def count(self, tenant: str, flt: Filter | None = None) -> int:
        result = await self._client.count(
            self.collection,
            count_filter=to_qdrant_filter(tenant, flt),
            exact=True,
            **self._shard(tenant),
        )
        return int(result.count)

    async def close(self) -> None:
        if self._owns_client:
            await self._client.close()

    # ---- moving to another embedding model ------------------------------------------
    # The store's name becomes an alias of the collection that holds its points: the
    # switch repoints it in one call, so every process using the name moves at once.

    async def scroll_all(
        self, *, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        if offset is not None and not is_uuid(offset):
            raise ValueError(f"scroll offset must be a point id: {offset!r}")
        records, next_offset = await self._client.scroll(
            self.collection, limit=limit, offset=offset, with_payload=True, with_vectors=False
        )
        points = [
            ScoredPoint(id=str(r.id), score=0.0, payload=dict(r.payload or {})) for r in records
        ]
        return points, (str(next_offset) if next_offset is not None else None)

    def beside(self, name: str, dim: int) -> VectorStore:
        other = ServerVectorStore.__new__(ServerVectorStore)
        other.collection = f"{self.collection}__{name}"
        other.dim = dim
        other.shard_groups = other._wanted_groups = self._wanted_groups
        other._local = self._local
        other._owns_client = False
        other._client = self._client
        return other

    async def _aliased(self) -> str | None:
        """The collection this store's name is an alias of (None: a collection itself)."""
        found = await self._client.get_aliases()
        return next(
            (a.collection_name for a in found.aliases if a.alias_name == self.collection), None
        )

    async def replace_with(self, other: VectorStore) -> None:
        if not isinstance(other, ServerVectorStore) or other._client is not self._client:
            raise ValueError("a server store is replaced only by a store made beside it")
        before = await self._aliased()
        ops: list[Any] = []
        if before is None:
            # A store from before its name was an alias: the name is taken by the
            # collection, which must go first (calls in between fail and are retried).
            await self._client.delete_collection(self.collection)
        else:
            ops.append(
                models.DeleteAliasOperation(
                    delete_alias=models.DeleteAlias(alias_name=self.collection)
                )
            )
        ops.append(
            models.CreateAliasOperation(
                create_alias=models.CreateAlias(
                    collection_name=other.collection, alias_name=self.collection
                )
            )
        )
        await self._client.update_collection_aliases(change_aliases_operations=ops)
        if before is not None and before != other.collection:
            await self._client.delete_collection(before)
        self.dim = other.dim
        self.shard_groups = other.shard_groups

    async def drop(self) -> None:
        await self._client.delete_collection(self.collection)
