"""Custom sharding of a Qdrant server collection by tenant: which shard key holds a tenant.

With `PCM_QDRANT_SHARD_GROUPS=N` (N > 0) the collection is made with custom sharding and N
shard keys `g0`..`g{N-1}`; each tenant's points live under one of them, chosen from a hash
of the tenant's name, so a tenant's searches, reads and writes reach one shard key's shards
instead of every shard. Grouping tenants, not one shard key per tenant: Qdrant keeps every
shard key's shards open (a collection of thousands of small tenants would hold thousands of
shards), and a fixed set is made once, with the collection, not on a tenant's first write.
A large tenant is moved onto its own shard key by re-embedding into a collection made with
more groups (docs/cluster.md).
"""

from __future__ import annotations

import hashlib

PREFIX = "g"


def shard_keys(groups: int) -> list[str]:
    """Every shard key of a collection sharded into `groups` (none when 0)."""
    return [f"{PREFIX}{n}" for n in range(max(0, groups))]


def shard_key_of(tenant: str, groups: int) -> str | None:
    """The shard key holding `tenant`'s points; None: the collection is not sharded by
    tenant. A stable hash (not Python's, which changes per process) so every replica agrees."""
    if groups <= 0:
        return None
    n = int.from_bytes(hashlib.sha256(tenant.encode()).digest()[:8], "big") % groups
    return f"{PREFIX}{n}"
