"""API keys without a server: lookups go by digest (never by the secret), roles per route,
configured keys' roles, durations, and `pcm serve`'s dev-key refusal."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from pcm_cli.keys import parse_duration
from pcm_cli.main import dev_key_refusal
from pcm_common.access.apikeys import KeyRecord, digest, new_secret
from pcm_common.access.auth import Guard, Refusal, configured_keys, required_role
from pcm_common.domain.clock import utcnow
from pcm_common.runtime.config import PcmSettings


def settings(**kw: Any) -> PcmSettings:
    return PcmSettings(_env_file=None, **kw)  # type: ignore[call-arg]


class FakeStore:
    """Records what the guard asks the key store for."""

    def __init__(self, records: dict[str, KeyRecord]) -> None:
        self.records = records
        self.asked: list[str] = []

    async def lookup(self, key_digest: str) -> KeyRecord | None:
        self.asked.append(key_digest)
        return self.records.get(key_digest)


def guard(s: PcmSettings, store: FakeStore, clock: list[float]) -> Guard:
    g = Guard(s, redis=None, clock=lambda: clock[0])  # type: ignore[arg-type]
    g.store = store  # type: ignore[assignment]
    return g


def record(tenant: str = "t1", role: str = "data", **kw: Any) -> KeyRecord:
    return KeyRecord(id="k_1", tenant=tenant, role=role, created_at=utcnow(), **kw)  # type: ignore[arg-type]


def test_digest_is_sha256_and_keys_are_32_random_bytes() -> None:
    key = new_secret()
    assert key.startswith("pcm_") and len(key) >= 4 + 43  # 32 bytes, url-safe base64
    assert digest(key) == hashlib.sha256(key.encode()).hexdigest()
    assert new_secret() != key


def test_configured_keys_are_held_by_digest_only() -> None:
    s = settings(
        api_keys={"secret-a": "ta"},
        admin_keys={"secret-admin": "tb"},
        operator_keys={"secret-op": "tc"},
    )
    table = configured_keys(s)
    for secret in ("secret-a", "secret-admin", "secret-op", s.dev_api_key):
        assert secret not in table and digest(secret) in table
    assert not any("secret" in p.key_id for p in table.values())


async def test_stored_lookup_asks_by_digest_never_by_secret() -> None:
    secret = new_secret()
    store = FakeStore({digest(secret): record()})
    clock = [0.0]
    g = guard(settings(dev_key_enabled=False), store, clock)
    p = await g.resolve(secret)
    assert (p.tenant, p.role, p.key_id) == ("t1", "data", "k_1")
    assert store.asked == [digest(secret)]
    with pytest.raises(Refusal) as refused:
        await g.resolve("pcm_wrong")
    assert refused.value.status == 401 and refused.value.code == "unknown_api_key"
    assert secret not in store.asked and "pcm_wrong" not in store.asked


async def test_cache_is_short_and_revocation_is_seen_after_it() -> None:
    secret = new_secret()
    store = FakeStore({digest(secret): record()})
    clock = [0.0]
    g = guard(settings(dev_key_enabled=False, api_key_cache_s=0.5), store, clock)
    await g.resolve(secret)
    store.records[digest(secret)] = record(revoked=True)
    clock[0] = 0.4
    await g.resolve(secret)  # cached: still accepted
    assert len(store.asked) == 1
    clock[0] = 0.6
    with pytest.raises(Refusal) as refused:
        await g.resolve(secret)
    assert refused.value.detail == "this key is revoked"


async def test_expired_key_is_refused_without_waiting_for_the_cache() -> None:
    secret = new_secret()
    ends = utcnow() - timedelta(seconds=1)
    store = FakeStore({digest(secret): record(expires_at=ends)})
    g = guard(settings(dev_key_enabled=False), store, [0.0])
    with pytest.raises(Refusal, match="unknown_api_key"):
        await g.resolve(secret)


async def test_configured_roles() -> None:
    store = FakeStore({})
    s = settings(api_keys={"k-data": "ta"}, admin_keys={"k-admin": "ta"})
    g = guard(s, store, [0.0])
    assert (await g.resolve("k-data")).role == "admin"  # PCM_API_KEYS_ROLE defaults to admin
    assert (await g.resolve("k-admin")).role == "admin"
    assert (await g.resolve(s.dev_api_key)).tenant == "dev"
    g = guard(settings(api_keys={"k-data": "ta"}, api_keys_role="data"), store, [0.0])
    assert (await g.resolve("k-data")).role == "data"
    with pytest.raises(Refusal) as refused:
        await g.admit("k-data", "POST", "/v1/jobs/{name}")
    assert refused.value.status == 403 and refused.value.code == "forbidden"
    assert (await g.admit("k-data", "GET", "/v1/jobs")).tenant == "ta"
    assert store.asked == []  # configured keys never reach the store


def test_required_role() -> None:
    assert required_role("POST", "/v1/jobs/{name}", {"name": "demotion"}) == "admin"
    assert required_role("POST", "/v1/jobs/{name}") == "admin"
    # Consolidation only adds episode records; agents' hooks and tools ask for it.
    assert required_role("POST", "/v1/jobs/{name}", {"name": "consolidation"}) == "data"
    assert required_role("GET", "/v1/admin/keys") == "admin"
    assert required_role("DELETE", "/v1/admin/keys/{key_id}") == "admin"
    assert required_role("GET", "/v1/jobs") == "data"
    assert required_role("POST", "/v1/memories") == "data"
    assert required_role("POST", "/v1/recall") == "data"
    # Re-embedding moves every tenant's vectors: an operator's, whichever the method.
    assert required_role("POST", "/v1/admin/reembed") == "operator"
    assert required_role("GET", "/v1/admin/reembed") == "operator"


async def test_only_operator_keys_reach_the_store_wide_routes() -> None:
    store = FakeStore({digest("k-stored"): record(role="admin")})
    s = settings(
        api_keys={"k-api": "ta", "k-both": "ta"},
        admin_keys={"k-admin": "ta"},
        operator_keys={"k-op": "tops", "k-both": "ta"},
    )
    g = guard(s, store, [0.0])
    for key in ("k-api", "k-admin", "k-stored"):  # a tenant's admin keys
        assert (await g.resolve(key)).role == "admin"
        with pytest.raises(Refusal) as refused:
            await g.admit(key, "POST", "/v1/admin/reembed")
        assert (refused.value.status, refused.value.code) == (403, "operator_only")
        assert "PCM_OPERATOR_KEYS" in (refused.value.detail or "")
    op = await g.admit("k-op", "GET", "/v1/admin/reembed")
    assert (op.tenant, op.role, op.operator) == ("tops", "admin", True)
    # An operator key is its tenant's admin key too; listed twice, it is an operator's.
    assert (await g.admit("k-op", "POST", "/v1/jobs/{name}")).tenant == "tops"
    assert (await g.admit("k-both", "POST", "/v1/admin/reembed")).tenant == "ta"
    # The dev key serves a development machine only: its one user is the operator.
    assert (await g.admit(s.dev_api_key, "POST", "/v1/admin/reembed")).operator
    assert not (await g.resolve("k-stored")).operator


def test_parse_duration() -> None:
    assert parse_duration("24h") == timedelta(hours=24)
    assert parse_duration("90") == timedelta(seconds=90)
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration("0") == timedelta(0)


def test_serve_refuses_the_dev_key_outside_dev() -> None:
    message = dev_key_refusal(settings(env=""))
    assert message and "PCM_DEV_KEY_ENABLED=false" in message and "PCM_ENV=dev" in message
    assert dev_key_refusal(settings(env="dev")) is None
    assert dev_key_refusal(settings(dev_key_enabled=False)) is None
