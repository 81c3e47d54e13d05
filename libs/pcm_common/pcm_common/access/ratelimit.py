"""Per-key rate limit (token bucket) and per-tenant quota (fixed one-minute window), both
in Redis so every replica counts together, decided by one Lua script per request.

Off unless configured (PCM_RATE_LIMIT_PER_S, PCM_TENANT_QUOTA_PER_MIN): then no Redis call
is made at all, so benchmarks and tests see no change.
"""

from __future__ import annotations

import math

from redis.asyncio import Redis

from pcm_common.stores.redis import keys, scripts

WINDOW_MS = 60_000


class RateLimiter:
    def __init__(self, redis: Redis, per_s: float, burst: int, tenant_per_min: int) -> None:
        self.per_s = max(0.0, per_s)
        # Unset burst: two seconds' worth (at least one request).
        self.burst = burst if burst > 0 else max(1, math.ceil(2 * self.per_s))
        self.tenant_per_min = max(0, tenant_per_min)
        self._script = redis.register_script(scripts.RATE_LIMIT) if self.enabled else None

    @property
    def enabled(self) -> bool:
        return self.per_s > 0 or self.tenant_per_min > 0

    async def check(self, key_id: str, tenant: str) -> float | None:
        """None when the request may go on; else the seconds to wait before retrying."""
        if self._script is None:
            return None
        allowed, retry_ms = await self._script(
            keys=[keys.rate_bucket(key_id, tenant), keys.tenant_quota(tenant)],
            args=[self.per_s, self.burst, self.tenant_per_min, WINDOW_MS],
        )
        return None if int(allowed) else int(retry_ms) / 1000
