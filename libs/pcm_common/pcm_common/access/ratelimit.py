"""Per-key rate limit (token bucket) and per-tenant quota (fixed one-minute window), both
in Redis so every replica counts together, decided by one Lua script per request.

Off unless configured (PCM_RATE_LIMIT_PER_S, PCM_TENANT_QUOTA_PER_MIN): then no Redis call
is made at all, so benchmarks and tests see no change.
"""

from __future__ import annotations

import math

from redis.asyncio import Redis

# KEYS[1]: the key's bucket (hash: tokens, ts); KEYS[2]: the tenant's window counter.
# ARGV: rate per s (0: no bucket), burst, tenant quota per window (0: none), window ms.
# Returns {allowed (1/0), retry after in ms}. Redis's own clock (TIME), so replicas with
# skewed clocks share one bucket. A refused request consumes nothing.
_SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local quota = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tokens = burst
if rate > 0 then
  local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
  if b[1] then
    tokens = math.min(burst, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) * rate)
  end
  if tokens < 1 then
    return {0, math.ceil((1 - tokens) / rate * 1000)}
  end
end
local used = 0
if quota > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used >= quota then
    local left = redis.call('PTTL', KEYS[2])
    if left < 0 then left = window_ms end
    return {0, left}
  end
end
if rate > 0 then
  redis.call('HSET', KEYS[1], 'tokens', tokens - 1, 'ts', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
end
if quota > 0 then
  if redis.call('INCR', KEYS[2]) == 1 then
    redis.call('PEXPIRE', KEYS[2], window_ms)
  end
end
return {1, 0}
"""

WINDOW_MS = 60_000


class RateLimiter:
    def __init__(self, redis: Redis, per_s: float, burst: int, tenant_per_min: int) -> None:
        self.per_s = max(0.0, per_s)
        # Unset burst: two seconds' worth (at least one request).
        self.burst = burst if burst > 0 else max(1, math.ceil(2 * self.per_s))
        self.tenant_per_min = max(0, tenant_per_min)
        self._script = redis.register_script(_SCRIPT) if self.enabled else None

    @property
    def enabled(self) -> bool:
        return self.per_s > 0 or self.tenant_per_min > 0

    async def check(self, key_id: str, tenant: str) -> float | None:
        """None when the request may go on; else the seconds to wait before retrying."""
        if self._script is None:
            return None
        allowed, retry_ms = await self._script(
            keys=[f"pcm:rl:key:{key_id}", f"pcm:rl:tenant:{tenant}"],
            args=[self.per_s, self.burst, self.tenant_per_min, WINDOW_MS],
        )
        return None if int(allowed) else int(retry_ms) / 1000
