"""Who is calling and may they: an API key resolved to its tenant and role, the role a
route needs, and the caller's rate limit. `pcm_common.runtime.http.tenant_of` runs it per request.

Keys come from two places: the configuration (PCM_API_KEYS, PCM_ADMIN_KEYS,
PCM_OPERATOR_KEYS, the dev key),
held in memory by digest, and the Redis key store (`pcm_common.access.apikeys`), read through a
per-process cache of at most `api_key_cache_s` (0.5 s by default): a key created or rotated
on one replica works on every replica, and a revoked one stops working, within that time,
with no restart and no Redis call per request for a busy key.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis

from pcm_common.access.apikeys import KeyRecord, KeyStore, Role, digest
from pcm_common.access.ratelimit import RateLimiter
from pcm_common.runtime.config import DEV_TENANT, PcmSettings

CACHE_MAX = 10_000  # cached digests; unknown keys are cached too, so a flood is bounded


@dataclass(frozen=True)
class Principal:
    tenant: str
    role: Role
    key_id: str  # a stored key's id, or "env-<digest prefix>" for a configured key
    # A configured operator key (PCM_OPERATOR_KEYS, or the dev key): may also run what
    # moves every tenant's data (OPERATOR_ROUTES). Never a stored key.
    operator: bool = False


# What a route needs: a key's role, or an operator key (`Principal.operator`).
Need = Literal["data", "admin", "operator"]


class Refusal(Exception):
    """An auth decision against the request; `tenant_of` turns it into an ApiError."""

    def __init__(
        self, status: int, code: str, detail: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = {"Retry-After": str(retry_after)} if retry_after is not None else None


# Jobs a data key may run: consolidation only adds episode records (sources are kept), and
# the agent-facing clients ask for it (`pcm consolidate`, the MCP tool, the PreCompact and
# Stop hooks), which hold data keys.
DATA_JOBS = frozenset({"consolidation"})
# Routes that change a tenant's data in bulk: erasing a user or scope, importing.
BULK_ROUTES = frozenset({("DELETE", "/v1/memories"), ("POST", "/v1/import")})
# Routes over the whole store, every tenant's data: a tenant's admin key must not start or
# watch them (re-embedding rewrites every tenant's vectors and changes the model all use).
OPERATOR_ROUTES = frozenset({"/v1/admin/reembed"})


def required_role(method: str, route_path: str, params: Mapping[str, Any] | None = None) -> Need:
    """`operator` for OPERATOR_ROUTES; `admin` for what changes data in bulk or administers
    keys: running a lifecycle job (POST /v1/jobs/{name}, but those in DATA_JOBS),
    BULK_ROUTES and the rest of /v1/admin/*; `data` (which admin keys also have) for
    everything else."""
    if route_path in OPERATOR_ROUTES:
        return "operator"
    if route_path.startswith("/v1/admin/"):
        return "admin"
    if method == "POST" and route_path.startswith("/v1/jobs/"):
        return "data" if (params or {}).get("name") in DATA_JOBS else "admin"
    if (method, route_path) in BULK_ROUTES:
        return "admin"
    return "data"


def configured_keys(s: PcmSettings) -> dict[str, Principal]:
    """The keys from the configuration, by digest. PCM_API_KEYS get `api_keys_role`
    (admin unless set to data, as before roles existed); PCM_ADMIN_KEYS are admin;
    PCM_OPERATOR_KEYS are admin and operator (a key listed twice takes the last of these).
    The dev key is an operator's too: it serves only a development machine (`pcm dev`;
    `pcm serve` refuses it elsewhere), whose one user runs `pcm reembed` with it."""
    by_digest: dict[str, Principal] = {}

    def add(key: str, tenant: str, role: Role, operator: bool = False) -> None:
        d = digest(key)
        by_digest[d] = Principal(tenant, role, f"env-{d[:12]}", operator)

    if s.dev_key_enabled:
        add(s.dev_api_key, DEV_TENANT, "admin", operator=True)
    for key, tenant in s.api_keys.items():
        add(key, tenant, s.api_keys_role)
    for key, tenant in s.admin_keys.items():
        add(key, tenant, "admin")
    for key, tenant in s.operator_keys.items():
        add(key, tenant, "admin", operator=True)
    return by_digest


class Guard:
    def __init__(
        self,
        settings: PcmSettings,
        redis: Redis,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.configured = configured_keys(settings)
        self.store = KeyStore(redis)
        self.limiter = RateLimiter(
            redis,
            per_s=settings.rate_limit_per_s,
            burst=settings.rate_limit_burst,
            tenant_per_min=settings.tenant_quota_per_min,
        )
        self.cache_s = settings.api_key_cache_s
        self._clock = clock
        self._cache: dict[str, tuple[float, KeyRecord | None]] = {}

    async def admit(
        self,
        secret: str,
        method: str,
        route_path: str,
        params: Mapping[str, Any] | None = None,
    ) -> Principal:
        principal = await self.resolve(secret)
        need = required_role(method, route_path, params)
        if need == "operator" and not principal.operator:
            raise Refusal(
                403,
                "operator_only",
                "this acts on every tenant's data: it needs an operator key (PCM_OPERATOR_KEYS)",
            )
        if need == "admin" and principal.role != "admin":
            raise Refusal(403, "forbidden", "this needs an admin key")
        retry = await self.limiter.check(principal.key_id, principal.tenant)
        if retry is not None:
            raise Refusal(429, "rate_limited", "too many requests", max(1, math.ceil(retry)))
        return principal

    async def resolve(self, secret: str) -> Principal:
        d = digest(secret)
        configured = self.configured.get(d)
        if configured is not None:
            return configured
        record = await self._stored(d)
        if record is None:
            raise Refusal(401, "unknown_api_key")
        state = record.state()
        if state != "active":
            # Same code as an unknown key (clients match on it); the detail says why.
            raise Refusal(401, "unknown_api_key", f"this key is {state}")
        return Principal(record.tenant, record.role, record.id)

    async def _stored(self, d: str) -> KeyRecord | None:
        now = self._clock()
        hit = self._cache.get(d)
        if hit is not None and now - hit[0] < self.cache_s:
            return hit[1]
        record = await self.store.lookup(d)
        if self.cache_s > 0:
            if len(self._cache) >= CACHE_MAX:
                self._cache.clear()
            self._cache[d] = (now, record)
        return record


def guard_of(state: Any, settings: PcmSettings, redis: Redis) -> Guard:
    """The app's guard, made on first use (an app's `state` holds it)."""
    guard: Guard | None = getattr(state, "guard", None)
    if guard is None:
        guard = Guard(settings, redis)
        state.guard = guard
    return guard
