"""Adapters built from settings, created on first use so each service opens only what it needs
(the graph-extractor never touches Qdrant; ingest never touches the graph)."""

from __future__ import annotations

import asyncio
from functools import cached_property
from typing import TYPE_CHECKING

from redis.asyncio import Redis

from pcm_common.messaging.bus import Bus
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.heartbeats import Heartbeats
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.connect import open_redis
from pcm_common.stores.vectors import usable_vector

if TYPE_CHECKING:
    from pcm_common.extract import Extractor
    from pcm_common.models.embeddings import Embedder
    from pcm_common.stores.dual_write import DualWriteStore
    from pcm_common.stores.graph.port import GraphStore
    from pcm_common.stores.redis.routines import RoutineIndex
    from pcm_common.stores.vectors import VectorStore

log = get_logger("resources")

# Points re-embedded to check a store that recorded no model, and the median cosine to
# their stored vectors that means the same model (a local model gives the same vector
# again, to ~1e-7; int8 and float MiniLM differ at 0.987-0.999).
UNRECORDED_SAMPLE = 8
SAME_MODEL_COS = 0.99999


class EmbeddingModelMismatch(RuntimeError):
    """The vector store holds vectors of another embedding model than the configured one."""


class Resources:
    def __init__(self, settings: PcmSettings) -> None:
        self.settings = settings
        self._opened: set[str] = set()

    @cached_property
    def heartbeats(self) -> Heartbeats:
        return Heartbeats(self.settings.stall_after_s)

    @cached_property
    def bus(self) -> Bus:
        self._opened.add("bus")
        return Bus(self.settings, self.heartbeats)

    @cached_property
    def redis(self) -> Redis:
        self._opened.add("redis")
        return open_redis(self.settings.redis_url, self.settings.redis_cluster)

    @cached_property
    def routines(self) -> RoutineIndex:
        from pcm_common.stores.redis.routines import RoutineIndex

        return RoutineIndex(self.redis)

    @cached_property
    def dual_writes(self) -> DualWriteStore:
        """The adapter, with writes made in a second store while a re-embedding job builds
        one (`pcm_common.data.reembed`); inside the strength overlay, so folds go to both."""
        from pcm_common.stores.dual_write import DualWriteStore

        self._opened.add("vectors")
        return DualWriteStore(self._vector_adapter())

    @cached_property
    def vectors(self) -> VectorStore:
        self._opened.add("vectors")
        store: VectorStore = self.dual_writes
        if not self.settings.strength_overlay:
            return store
        from pcm_common.stores.redis.strength_overlay import StrengthOverlayStore

        return StrengthOverlayStore(store, self.redis)

    def _vector_adapter(self) -> VectorStore:
        s = self.settings
        if s.qdrant_url:
            from pcm_common.stores.qdrant.server import ServerVectorStore

            return ServerVectorStore(
                url=s.qdrant_url,
                api_key=s.qdrant_api_key,
                collection=s.collection,
                dim=s.embedding_dim,
                shard_groups=s.qdrant_shard_groups,
            )
        from pcm_common.stores.qdrant.edge.store import EdgeVectorStore

        return EdgeVectorStore(
            path=s.qdrant_path,
            dim=s.embedding_dim,
            max_segment_kb=s.qdrant_max_segment_kb,
            indexing_threshold_kb=s.qdrant_indexing_threshold_kb,
            optimize_in_child=s.qdrant_optimize_in_child,
            payload_cache=s.qdrant_payload_cache,
            dense_mirror=s.qdrant_dense_mirror,
        )

    async def open_vectors(self) -> None:
        """Create the collection if missing, and check that its vectors were made with
        this process's embedding model (or one whose vectors it searches alike,
        `embeddings.interchangeable`): the one recorded in the store (by the first
        service to open it), or for a store that recorded none, by embedding some of its
        texts again. Raises `EmbeddingModelMismatch` otherwise."""
        from pcm_common.models.embeddings import interchangeable

        await self.vectors.ensure_collection()
        model = self.settings.embedding_model
        recorded = await self.vectors.embedding_model()
        if recorded is None:
            await self._check_unrecorded(model)
            recorded = await self.vectors.claim_embedding_model(model)
        if recorded is not None and not interchangeable(recorded, model):
            if await self._moved_to(recorded):
                # `pcm reembed` moved the store: its model is the one to use now.
                log.warning(
                    "embedding_model_moved",
                    configured=model,
                    store=recorded,
                    hint=f"set PCM_EMBEDDING_MODEL={recorded}",
                )
                self.use_embedding_model(recorded)
                return
            raise EmbeddingModelMismatch(
                f"the vector store's memories were embedded with {recorded!r} but "
                f"PCM_EMBEDDING_MODEL is {model!r}: vectors of two models cannot be compared. "
                f"Set PCM_EMBEDDING_MODEL={recorded}, or start from an empty store."
            )

    async def _moved_to(self, recorded: str) -> bool:
        """Whether a re-embedding job moved the store to `recorded` (its record says it
        switched, or was switching, to that model)."""
        from pcm_common.stores.redis import keys

        status, to = await self.redis.hmget(keys.REEMBED, ["status", "model"])
        text = [v.decode() if isinstance(v, bytes) else v for v in (status, to)]
        return text[0] in ("switching", "done") and text[1] == recorded

    def use_embedding_model(self, model: str) -> None:
        """Embed with `model` from now on (a re-embedding job switched the store to it):
        the settings report it, and the next use of `embedder` builds it."""
        from pcm_common.models.embeddings import known_dim

        self.settings.embedding_model = model
        self.settings.embedding_dim = known_dim(model) or self.settings.embedding_dim
        self.__dict__.pop("embedder", None)

    async def _check_unrecorded(self, model: str) -> None:
        """A store from before models were recorded: its texts embedded again must give
        its vectors back (the local models are deterministic); otherwise the error names
        the local model that does. A hosted model is taken on trust, without paid calls."""
        from pcm_common.models.embeddings import LOCAL_PROVIDER, Embedder, local_models

        if not model.startswith(f"{LOCAL_PROVIDER}/"):
            return
        dim = self.embedder.dim
        points = [
            p
            for p in await self.vectors.sample(UNRECORDED_SAMPLE)
            if usable_vector(p.vector, dim) and isinstance(p.payload.get("text"), str)
        ]
        if not points:
            return
        texts = [str(p.payload["text"]) for p in points]

        async def gives_back(name: str) -> bool:
            embedder = self.embedder if name == model else Embedder(name)
            again = await embedder.embed(texts)
            cos = sorted(
                sum(a * b for a, b in zip(p.vector or [], v, strict=True))
                for p, v in zip(points, again, strict=True)
            )
            return cos[len(cos) // 2] >= SAME_MODEL_COS

        if await gives_back(model):
            return
        made_with = [m for m in local_models() if m != model and await gives_back(m)]
        hint = (
            f"set PCM_EMBEDDING_MODEL={made_with[0]}"
            if made_with
            else "set PCM_EMBEDDING_MODEL to the model it was made with"
        )
        raise EmbeddingModelMismatch(
            f"the vector store's memories were not embedded with {model!r} (it was made "
            f"before stores recorded their model): {hint}, or start from an empty store."
        )

    @property
    def indexing(self) -> bool:
        """Whether this process's vector store is building an index (False when it has
        not opened one: asking must not open it)."""
        return "vectors" in self._opened and self.vectors.capabilities().indexing

    @cached_property
    def graph(self) -> GraphStore:
        self._opened.add("graph")
        from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore

        s = self.settings
        return Neo4jGraphStore(
            s.neo4j_uri, s.neo4j_user, s.neo4j_password, s.neo4j_database, s.graph_timeout_s
        )

    @cached_property
    def embedder(self) -> Embedder:
        from pcm_common.models.embeddings import Embedder

        return Embedder(
            model=self.settings.embedding_model, batch_size=self.settings.embedding_batch
        )

    @cached_property
    def extractor(self) -> Extractor:
        from pcm_common.extract.factory import extractor_from

        return extractor_from(self.settings)

    async def aclose(self) -> None:
        if "bus" in self._opened:
            await self.bus.stop()
        if "vectors" in self._opened:
            await self.vectors.close()
        if "graph" in self._opened:
            await self.graph.close()
        if "redis" in self._opened:
            await self.redis.aclose()
        from pcm_common.extract import parse_process

        await asyncio.to_thread(parse_process.shutdown)
