"""Typed settings shared by every service; each service extends `PcmSettings`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from pcm_common.runtime.profiles import PROFILES, ProfileSource, missing_servers, unknown_profile

DEV_API_KEY = "pcm-dev-key"
DEV_TENANT = "dev"


class PcmSettings(BaseSettings):
    """Connection and model settings every PCM process needs.

    The three server addresses read the conventional unprefixed variables
    (`REDIS_URL`, `QDRANT_URL`, `NEO4J_URI`) as well as their `PCM_` names. A profile
    (`PCM_PROFILE`, `pcm_common.runtime.profiles`) supplies the defaults of the settings left unset.
    """

    model_config = SettingsConfigDict(env_prefix="PCM_", extra="ignore")

    # starter | local-performance | scale; empty: the fields' own defaults.
    profile: str = ""

    redis_url: str = Field(
        "redis://127.0.0.1:6379/0", validation_alias=AliasChoices("REDIS_URL", "PCM_REDIS_URL")
    )
    # Redis Cluster: `redis_url` names any one node (a `redis+cluster://` URL says the same).
    # Keys of one tenant share a hash slot; how the streams spread: docs/cluster.md.
    redis_cluster: bool = False
    # Qdrant server URL; when empty the embedded Qdrant Edge shard at `qdrant_path` is used.
    qdrant_url: str = Field("", validation_alias=AliasChoices("QDRANT_URL", "PCM_QDRANT_URL"))
    qdrant_api_key: str = Field(
        "", validation_alias=AliasChoices("QDRANT_API_KEY", "PCM_QDRANT_API_KEY")
    )
    qdrant_path: Path = Path("var/qdrant-edge")
    # With a Qdrant server: tenants' points in this many shard keys (custom sharding, set
    # when the collection is made; 0: Qdrant's automatic sharding). docs/cluster.md.
    qdrant_shard_groups: int = Field(0, ge=0, le=4096)
    # Largest Qdrant Edge segment the optimizer builds, in KB of vectors (0: Qdrant's own
    # default, one ever-growing segment): a build holds the interpreter lock, so its
    # stalls stay bounded. Why 20,000: docs/decisions/0001-edge-segment-cap.md.
    qdrant_max_segment_kb: int = 20_000
    # Smallest Qdrant Edge segment given an HNSW index, in KB of vectors (0: Qdrant Edge's
    # own): at the segment cap, each segment is indexed once, at its final size.
    # Why: docs/decisions/0002-edge-indexing-threshold.md.
    qdrant_indexing_threshold_kb: int = 20_000
    # Build Qdrant Edge's index in a child process on a copy of the shard (the in-process
    # build holds the interpreter lock for seconds); `pcm_common.stores.qdrant.edge.optimize`.
    # Why off: docs/decisions/0003-edge-index-build-in-process.md.
    qdrant_optimize_in_child: bool = False
    # Payloads Qdrant Edge's adapter keeps in memory, least recently used dropped first
    # (`pcm_common.stores.qdrant.edge.payload_cache`; 0: none): decoding payloads is most of
    # a search's store time. Ignored with a Qdrant server.
    # Why 10,000: docs/decisions/0004-edge-payload-cache.md.
    qdrant_payload_cache: int = 10_000
    # Points whose dense vectors (and the few fields batch searches filter on) Qdrant
    # Edge's adapter keeps in memory, over all tenants, for batch searches in NumPy off the
    # interpreter lock (`pcm_common.stores.qdrant.edge.dense_mirror`; 0: none); a tenant that
    # does not fit is searched by the engine. Ignored with a Qdrant server.
    # Why: docs/decisions/0005-edge-dense-mirror.md.
    qdrant_dense_mirror: int = 200_000
    # Strength updates (recall side effects, repeats) kept in Redis and folded into the
    # payloads by the sweeper's `strength_fold` job (`pcm_common.stores.redis.strength_overlay`);
    # false: written directly. Why: docs/decisions/0006-strength-overlay.md.
    strength_overlay: bool = True
    collection: str = "pcm_memories"

    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687", validation_alias=AliasChoices("NEO4J_URI", "PCM_NEO4J_URI")
    )
    neo4j_user: str = Field("neo4j", validation_alias=AliasChoices("NEO4J_USER", "PCM_NEO4J_USER"))
    neo4j_password: str = Field(
        "pcm-dev-password", validation_alias=AliasChoices("NEO4J_PASSWORD", "PCM_NEO4J_PASSWORD")
    )
    neo4j_database: str = ""  # empty: the server's default database
    graph_timeout_s: float = 2.0
    # A write's `created_at` or a recall's `now` later than the real clock plus this is
    # refused (422): a memory dated in the future would not decay until then, and a
    # reinforcement at a future `now` would move its memory's reference time there (it
    # then escaped demotion). A day covers clients' clock skew; simulations run in the past.
    max_future_s: int = 86_400

    # litellm model names; "pcm-local/..." are the in-package ONNX MiniLM: "minilm-q8s"
    # (the default: memories by a smoothed int8 graph, queries by the float graph),
    # "minilm" (float), "minilm-q8t" (int8, one activation scale per token) and "minilm-q8"
    # (int8, one scale per tensor). Why q8s: docs/decisions/0033-embedding-model-minilm-q8s.md.
    embedding_model: str = "pcm-local/minilm-q8s"
    embedding_dim: int = 384
    embedding_batch: int = 64

    # Entity/relation extraction, shared by the graph-extractor (writes) and recall (query
    # entities): spaCy rules (default, no model server) or an LLM through litellm.
    extractor: Literal["local", "llm"] = "local"
    extraction_model: str = "openai/gpt-4o-mini"  # any litellm chat model for extractor=llm
    extraction_api_base: str = ""
    extraction_attempts: int = 3  # invalid LLM answers retried this often, then the event fails
    extraction_concurrency: int = 8  # LLM calls in flight per process

    # API keys: JSON object {"key": "tenant"}; the dev key is added when `dev_key_enabled`.
    # Keys can also be stored hashed in Redis (`pcm keys`, /v1/admin/keys; pcm_common.access.auth).
    api_keys: dict[str, str] = Field(default_factory=dict)
    # Role of the PCM_API_KEYS keys: admin (they may also run jobs and administer their
    # tenant's keys, as every key could before roles) or data.
    api_keys_role: Literal["admin", "data"] = "admin"
    # More configured keys, always admin: JSON object {"key": "tenant"}.
    admin_keys: dict[str, str] = Field(default_factory=dict)
    # Operator keys, JSON object {"key": "tenant"}: admin keys of that tenant that alone may
    # also run what moves every tenant's data (re-embedding the store, /v1/admin/reembed).
    # Configured only: no key store call or tenant admin can make one.
    operator_keys: dict[str, str] = Field(default_factory=dict)
    dev_key_enabled: bool = True
    dev_api_key: str = DEV_API_KEY
    # "dev" allows `pcm serve` to start with the dev key on; `pcm dev` sets it itself.
    env: str = ""
    # How long a replica trusts what it read of a stored key (seconds): the time a new,
    # rotated or revoked key takes to be seen by every replica.
    api_key_cache_s: float = Field(0.5, ge=0, le=5)
    # Per-key token bucket (requests per second; 0: off) and its burst (0: 2 s worth), and
    # a per-tenant quota (requests per minute, all its keys; 0: off). Refused: 429 with
    # Retry-After. Counted in Redis, shared by every replica.
    rate_limit_per_s: float = Field(0.0, ge=0)
    rate_limit_burst: int = Field(0, ge=0)
    tenant_quota_per_min: int = Field(0, ge=0)

    # Event processing.
    consumer_name: str = ""  # defaults to hostname-pid
    # Entries a consumer group handles at once per process (ack stays per entry).
    consumer_concurrency: int = 1
    claim_idle_ms: int = 30_000  # pending entries idle this long are claimed by another replica
    max_deliveries: int = 5  # failures before an entry goes to pcm.dlq
    stream_maxlen: int = 1_000_000

    # OpenTelemetry tracing (`pcm_common.runtime.tracing`): none (off), console (spans on
    # stdout, for a look on a laptop) or otlp (OTLP over HTTP; the `otlp` extra). The
    # endpoint is the collector's traces URL (empty: the exporter's own default, which
    # reads OTEL_EXPORTER_OTLP_ENDPOINT); the ratio is of new traces kept; the service name
    # defaults to pcm-<services of the process>.
    trace_exporter: Literal["none", "console", "otlp"] = "none"
    trace_endpoint: str = ""
    trace_sample_ratio: float = Field(1.0, ge=0, le=1)
    trace_service_name: str = ""

    log_level: str = "INFO"
    log_json: bool = True
    # /healthz answers 503 when a consumer loop or the scheduler has not been through an
    # iteration (idle waits included) for this long (`pcm_common.runtime.heartbeats`). One batch
    # or one tenant's job taking longer counts as a stall, so it sits well above both.
    stall_after_s: float = Field(default=600.0, gt=0)

    # Garbage collector (`pcm_common.runtime.gc_tuning`): freeze what start-up loaded, and collect
    # the young generation every this many net allocations (0: Python's default, 700).
    # Why: docs/decisions/0042-gc-tuning.md.
    gc_freeze: bool = True
    gc_gen0_threshold: int = 50_000

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # After every explicit source, so an argument or a variable always beats the profile.
        explicit = (init_settings, env_settings, dotenv_settings, file_secret_settings)
        return (*explicit, ProfileSource(settings_cls, explicit))

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, v: str) -> str:
        name = v.strip().lower()
        if name and name not in PROFILES:
            raise ValueError(unknown_profile(v))
        return name

    @model_validator(mode="after")
    def _profile_servers(self) -> PcmSettings:
        # `scale` cannot fall back to the embedded store or a local graph it never named.
        why = missing_servers(self.profile, set(self.model_fields_set), self.__dict__)
        if why:
            raise ValueError(why)
        return self

    @field_validator("api_keys", "admin_keys", "operator_keys", mode="before")
    @classmethod
    def _parse_keys(cls, v: Any) -> Any:
        if isinstance(v, str):
            return json.loads(v) if v.strip() else {}
        return v

    def tenant_keys(self) -> dict[str, str]:
        keys = dict(self.api_keys)
        if self.dev_key_enabled:
            keys.setdefault(self.dev_api_key, DEV_TENANT)
        return keys
