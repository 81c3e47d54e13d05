"""Every key builder of `pcm_common.stores.redis.keys` puts a tenant's keys in one Redis
Cluster hash slot, the tenant's tag's, whatever the tenant's name; the global keys used
together share theirs; and old untagged names move to the tagged ones (`retag`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import fakeredis
import pytest
from redis.crc import key_slot

from pcm_common.stores.redis import keys
from pcm_common.stores.redis.connect import cluster_url
from pcm_common.stores.redis.retag import MARKER, new_name, retag_legacy_keys

TENANTS = ["acme", "a:b", "a}b", "}x", "{x}", "{", "ünï cödé", "x" * 200]

# Values for the builders' other arguments, by parameter name.
ARGS: dict[str, Any] = {
    "memory_id": "m-1",
    "key_id": "k_1",
    "recall_id": "r-1",
    "routine": "routine:1",
    "key": "idem key",
    "digest": "d" * 32,
    "stream": "s" * 24,
    "subject": "recall:r-1",
    "name": "decay",
    "copy_key": ("user", "text"),
    "scope": "user",
    "workspace": "w",
    "project": None,
    "user_id": "ana",
}
# Lock names, not keys: `KeyLocks` puts `KEY_LOCK_PREFIX` before them.
LOCK_NAMES = {"copy_lock", "memory_lock", "feedback_lock"}
# Found by the API key's digest before the tenant is known: the API keys' slot.
GLOBAL_SLOT = {"apikeys_of"}


def _slot(key: str) -> int:
    return key_slot(key.encode())


def _tenant_builders() -> dict[str, Callable[..., str]]:
    out = {}
    for name, fn in inspect.getmembers(keys, inspect.isfunction):
        if fn.__module__ != keys.__name__ or name.endswith("_pattern") or name == "tenant_tag":
            continue
        if "tenant" in inspect.signature(fn).parameters:
            out[name] = fn
    return out


def _call(fn: Callable[..., str], tenant: str) -> str:
    params = inspect.signature(fn).parameters
    unknown = [p for p in params if p != "tenant" and p not in ARGS and p != "prefix"]
    assert not unknown, f"{fn.__name__}: give ARGS a value for {unknown}"
    return fn(**{p: tenant if p == "tenant" else ARGS[p] for p in params if p != "prefix"})


def test_the_builders_are_all_found() -> None:
    found = set(_tenant_builders())
    assert {"strength", "governance", "idempotency", "labile", "feedback_version"} <= found
    assert len(found) >= 30


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_key_of_a_tenant_is_in_the_tenants_slot(tenant: str) -> None:
    home = _slot(keys.tenant_tag(tenant))
    slots = {}
    for name, fn in _tenant_builders().items():
        if name in GLOBAL_SLOT:
            continue
        key = _call(fn, tenant)
        if name in LOCK_NAMES:
            key = keys.KEY_LOCK_PREFIX + key
        slots[name] = _slot(key)
    # The erasure job's keys are derived from its record's name.
    job = keys.erasure(tenant, "d" * 32)
    for derived in (keys.erasure_lock, keys.erasure_ids, keys.erasure_owners):
        slots[derived.__name__] = _slot(derived(job))
    off = {name: slot for name, slot in slots.items() if slot != home}
    assert not off, f"tenant {tenant!r}: builders outside slot {home}: {off}"


def test_tenants_spread_over_slots() -> None:
    slots = {_slot(keys.governance(f"tenant-{n}")) for n in range(200)}
    assert len(slots) > 150


def test_the_api_key_families_share_one_slot() -> None:
    """`KeyStore.create` writes all four in one MULTI."""
    slots = {
        _slot(keys.apikey_record("digest")),
        _slot(keys.apikey_digest("k_1")),
        _slot(keys.apikeys_of("acme")),
        _slot(keys.APIKEY_TENANTS),
    }
    assert len(slots) == 1


def test_the_rate_limit_scripts_keys_share_the_tenants_slot() -> None:
    assert _slot(keys.rate_bucket("k_1", "acme")) == _slot(keys.tenant_quota("acme"))


@pytest.mark.parametrize("tenant", TENANTS)
def test_scan_patterns_match_their_builders_keys(tenant: str) -> None:
    import fnmatch

    def matches(pattern: str, key: str) -> bool:
        # SCAN MATCH escapes like fnmatch's brackets: turn `\x` into `[x]`.
        out, i = [], 0
        while i < len(pattern):
            if pattern[i] == "\\" and i + 1 < len(pattern):
                out.append("[" + pattern[i + 1] + "]")
                i += 2
            else:
                out.append(pattern[i])
                i += 1
        return fnmatch.fnmatchcase(key, "".join(out))

    assert matches(keys.idempotency_pattern(tenant), keys.idempotency(tenant, "k"))
    assert matches(keys.feedback_recall_pattern(tenant), keys.feedback_recall(tenant, "r"))
    assert matches(keys.labile_pattern(tenant), keys.labile(tenant, "m"))
    assert matches(keys.routine_entries_pattern(tenant), keys.routine_entries(tenant, "r"))


def test_cluster_urls() -> None:
    assert cluster_url("redis+cluster://h:7000", False) == ("redis://h:7000", True)
    assert cluster_url("rediss+cluster://u:p@h:7000", False) == ("rediss://u:p@h:7000", True)
    assert cluster_url("redis://h:6379/0", True) == ("redis://h:6379/0", True)
    assert cluster_url("redis://h:6379/0", False) == ("redis://h:6379/0", False)


def test_old_names_map_to_the_tagged_builders() -> None:
    tenants = {"acme", "a", "a:b"}
    assert new_name("pcm:governance:acme", tenants, set()) == keys.governance("acme")
    assert new_name("pcm:strength:a:b", tenants, set()) == keys.strength("a:b")
    idem = keys.idempotency("a:b", "k")
    old = idem.replace(keys.tenant_tag("a:b"), "a:b")
    assert new_name(old, tenants, set()) == idem
    assert new_name("pcm:routine:a:r:x:y", tenants, set()) == keys.routine_entries("a", "x:y")
    assert new_name("pcm:job:runs:decay:a:b", tenants, set()) == keys.job_runs("decay", "a:b")
    assert new_name("pcm:apikey:d:abc", tenants, set()) == keys.apikey_record("abc")
    assert new_name("pcm:apikey:id:k_1", tenants, set()) == keys.apikey_digest("k_1")
    assert new_name("pcm:apikeys:tenants", tenants, set()) == keys.APIKEY_TENANTS
    assert new_name("pcm:apikeys:acme", tenants, {"acme"}) == keys.apikeys_of("acme")
    # Not old names: tagged already, unknown tenants, other families.
    assert new_name(keys.governance("acme"), tenants, set()) is None
    assert new_name("pcm:governance:stranger", tenants, set()) is None
    assert new_name("pcm:outbox:written", tenants, set()) is None
    assert new_name("pcm:lock:key:copy:acme:x", tenants, set()) is None


async def test_retag_moves_old_keys_once() -> None:
    redis = fakeredis.FakeAsyncRedis()
    await redis.sadd(keys.TENANTS, "acme", "a:b")
    await redis.sadd("pcm:apikeys:tenants", "acme")
    await redis.hset("pcm:governance:acme", "global", "{}")
    await redis.zadd("pcm:tombstones:a:b", {"m1": 1.0})
    await redis.set("pcm:feedback:a:b:ver", 3)
    await redis.hset("pcm:apikey:d:abc", "tenant", "acme")
    await redis.zadd("pcm:apikeys:acme", {"k_1": 1.0})
    # Written under the new name already: kept, the old one left beside it.
    await redis.set(keys.last_write("acme"), "new")
    await redis.set("pcm:lastwrite:acme", "old")

    assert await retag_legacy_keys(redis) == 6
    assert await redis.hget(keys.governance("acme"), "global") == b"{}"
    assert await redis.zscore(keys.tombstones("a:b"), "m1") == 1.0
    assert await redis.get(keys.feedback_version("a:b")) == b"3"
    assert await redis.hget(keys.apikey_record("abc"), "tenant") == b"acme"
    assert await redis.zscore(keys.apikeys_of("acme"), "k_1") == 1.0
    assert await redis.smembers(keys.APIKEY_TENANTS) == {b"acme"}
    assert await redis.get(keys.last_write("acme")) == b"new"
    assert await redis.exists(MARKER)
    # Once: a later start moves nothing, even an old name written since.
    await redis.hset("pcm:governance:acme", "global", "{}")
    assert await retag_legacy_keys(redis) == 0
    await redis.aclose()
