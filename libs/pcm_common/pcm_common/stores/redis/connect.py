"""One way to open PCM's Redis client: a single server, or a Redis Cluster.

A cluster is chosen by `PCM_REDIS_CLUSTER=true` or by a `redis+cluster://` (TLS:
`rediss+cluster://`) URL naming any one node; the client then learns the others from it.
Every key, script and MULTI of PCM stays within one hash slot (`keys.tenant_tag`,
docs/cluster.md), so the rest of the code uses the same commands either way.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


def cluster_url(url: str, cluster: bool) -> tuple[str, bool]:
    """The plain URL a client is built from, and whether it names a cluster."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme in CLUSTER_SCHEMES:
        return f"{CLUSTER_SCHEMES[scheme]}://{rest}", True
    return url, cluster


def open_redis(url: str, cluster: bool = False) -> Redis:
    """A client for `url`. A cluster's client is typed as `Redis`: it offers every command
    PCM sends (keyed commands route by slot; SCAN visits every primary; a MULTI must keep
    to one slot, which PCM's keys do)."""
    plain, is_cluster = cluster_url(url, cluster)
    if is_cluster:
        return cast(Redis, RedisCluster.from_url(plain))
    return Redis.from_url(plain)


def is_cluster(client: object) -> bool:
    return isinstance(client, RedisCluster)
