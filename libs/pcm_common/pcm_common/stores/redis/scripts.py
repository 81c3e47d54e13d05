"""Every Lua script PCM runs in Redis, with what it takes (KEYS, ARGV) and returns. Each is
one atomic read-and-update that replicas share."""

from __future__ import annotations

# Rate limit and quota (`pcm_common.access.ratelimit`).
# KEYS[1]: the key's bucket (hash: tokens, ts); KEYS[2]: the tenant's window counter.
# ARGV: rate per s (0: no bucket), burst, tenant quota per window (0: none), window ms.
# Returns {allowed (1/0), retry after in ms}. Redis's own clock (TIME), so replicas with
# skewed clocks share one bucket. A refused request consumes nothing.
RATE_LIMIT = """
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

# Locks (`locks.release`): deletes the keys this holder still owns (a key whose TTL ran out
# may be another's now). KEYS: the lock keys; ARGV[1]: the holder's token. Returns how many.
RELEASE_LOCKS = """
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then n = n + redis.call('DEL', key) end
end
return n
"""

# The sweeper's job lock, extended while its job runs. KEYS[1]: the lock; ARGV: the
# holder's token, the TTL in s. Returns 1 when extended, 0 when the lock is another's.
EXTEND_LOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('expire', KEYS[1], ARGV[2]) end
return 0
"""

# Strength overlay fold (`strength_overlay`): drop each (field, value) pair of KEYS[1] whose
# field still holds that value. ARGV: field, value, field, value... Returns how many.
DROP_IF_SAME = """
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('hget', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('hdel', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
"""

# Auto-episodes (`pcm_ingest.episodes`): join the stream's current episode or open one.
# KEYS[1]: the stream's hash. ARGV: created_ts, gap in seconds, id for a new episode, TTL.
# Returns the episode id.
EPISODE_JOIN_OR_OPEN = """
local ts = tonumber(ARGV[1])
local gap = tonumber(ARGV[2])
local cur = redis.call('HMGET', KEYS[1], 'id', 'first', 'last')
local id = ARGV[3]
if cur[1] and ts >= tonumber(cur[2]) - gap and ts <= tonumber(cur[3]) + gap then
  id = cur[1]
  if ts > tonumber(cur[3]) then redis.call('HSET', KEYS[1], 'last', ARGV[1]) end
  if ts < tonumber(cur[2]) then redis.call('HSET', KEYS[1], 'first', ARGV[1]) end
else
  redis.call('HSET', KEYS[1], 'id', id, 'first', ARGV[1], 'last', ARGV[1])
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return id
"""

# Reconsolidation's claim of one rewrite (`lability.Lability.claim`). KEYS[1]: the memory's
# labile key, KEYS[2]: its cooldown key, KEYS[3]: the recall's rewrite counter (one
# tenant's keys: one hash tag). ARGV: the recall id the caller read from KEYS[1], the
# cooldown in ms, the most rewrites a recall may cause, the counter's TTL in ms.
# Returns 1 (claimed: cooldown set, counter raised), 0 (no longer labile, or labile by
# another recall since), -1 (cooling down), -2 (the recall's rewrites are spent).
CLAIM_REWRITE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[3]) then return -2 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
if redis.call('INCR', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
return 1
"""
