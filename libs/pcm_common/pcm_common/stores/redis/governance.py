"""Scope policies (`pcm_common.domain.governance`) in Redis: one hash per tenant
(`keys.governance`), field = the scope's key (``global``, ``workspace:{name}``,
``project:{name}``), value = the policy as JSON. A write reads the whole hash once (a
tenant sets a handful of policies), so every ingest replica sees a change at once.
"""

from __future__ import annotations

from redis.asyncio import Redis

from pcm_common.domain.governance import Policy, ScopeRef
from pcm_common.stores.redis import keys


class GovernanceStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def all(self, tenant: str) -> dict[str, Policy]:
        raw = await self.redis.hgetall(keys.governance(tenant))
        out: dict[str, Policy] = {}
        for k, v in raw.items():
            name = k.decode() if isinstance(k, bytes) else str(k)
            out[name] = Policy.model_validate_json(v)
        return out

    async def put(self, tenant: str, ref: ScopeRef, policy: Policy) -> None:
        """Store `policy` for `ref`; a policy that sets nothing removes the entry."""
        if policy.is_empty():
            await self.redis.hdel(keys.governance(tenant), ref.key)
        else:
            await self.redis.hset(
                keys.governance(tenant), ref.key, policy.model_dump_json(exclude_none=True)
            )

    async def delete(self, tenant: str, ref: ScopeRef) -> bool:
        return bool(await self.redis.hdel(keys.governance(tenant), ref.key))
