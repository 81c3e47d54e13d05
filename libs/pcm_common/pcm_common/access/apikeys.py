"""API keys stored in Redis, hashed: create, look up, list, rotate, revoke.

Only the SHA-256 digest of a key is stored, never the key. A plain (unpeppered, unsalted)
SHA-256 is enough because every key this module issues is 32 random bytes: nobody can
brute-force 256 bits, so a slow or salted hash would add cost per request and no safety.
(Keys an operator types into PCM_API_KEYS are hashed the same way in memory; choosing
guessable ones there is the operator's risk, as it was before.)

A lookup goes by the digest, so its timing depends on the digest and not on the secret:
an attacker who measures it learns bits of a hash whose preimage he cannot find.

Layout (one Redis, shared by every replica): the API key family of
`pcm_common.stores.redis.keys`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from redis.asyncio import Redis

from pcm_common.domain.clock import utcnow
from pcm_common.stores.redis import Fields, keys

Role = Literal["admin", "data"]
ROLES: tuple[Role, ...] = ("admin", "data")
KEY_PREFIX = "pcm_"  # marks a PCM key in logs and secret scanners
SHOWN_CHARS = 8  # characters of a key after its prefix that `list` shows to tell keys apart


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_secret() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class KeyRecord:
    id: str
    tenant: str
    role: Role
    created_at: datetime
    expires_at: datetime | None = None
    revoked: bool = False
    revoked_at: datetime | None = None
    shown: str = ""  # the key's first characters, to recognise it in a list
    rotated_to: str = ""  # id of the key that replaced this one

    def state(self, now: datetime | None = None) -> str:
        if self.revoked:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or utcnow()):
            return "expired"
        return "active"

    def public(self) -> dict[str, Any]:
        """Everything about the key but the digest (what `list` and the admin API show)."""
        return {**asdict(self), "state": self.state()}

    def to_redis(self, key_digest: str) -> Fields:
        return {
            "id": self.id,
            "digest": key_digest,
            "tenant": self.tenant,
            "role": self.role,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat() if self.expires_at else "",
            "revoked": "1" if self.revoked else "0",
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else "",
            "shown": self.shown,
            "rotated_to": self.rotated_to,
        }

    @classmethod
    def from_redis(cls, raw: Mapping[bytes | str, bytes | str]) -> KeyRecord:
        f = {_text(k): _text(v) for k, v in raw.items()}
        role = f.get("role", "data")
        return cls(
            id=f["id"],
            tenant=f["tenant"],
            role=role if role in ROLES else "data",
            created_at=datetime.fromisoformat(f["created_at"]),
            expires_at=_time(f.get("expires_at", "")),
            revoked=f.get("revoked") == "1",
            revoked_at=_time(f.get("revoked_at", "")),
            shown=f.get("shown", ""),
            rotated_to=f.get("rotated_to", ""),
        )


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _time(s: str) -> datetime | None:
    return datetime.fromisoformat(s) if s else None


@dataclass(frozen=True)
class NewKey:
    """A key just made: the secret is here and nowhere else, shown to its maker once."""

    key: str
    record: KeyRecord


class KeyStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def create(self, tenant: str, role: Role, expires_in: timedelta | None = None) -> NewKey:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        if not tenant:
            raise ValueError("tenant is empty")
        secret = new_secret()
        now = utcnow()
        record = KeyRecord(
            id="k_" + secrets.token_hex(6),
            tenant=tenant,
            role=role,
            created_at=now,
            expires_at=now + expires_in if expires_in is not None else None,
            shown=secret[: len(KEY_PREFIX) + SHOWN_CHARS],
        )
        d = digest(secret)
        async with self.redis.pipeline(transaction=True) as p:
            p.hset(keys.apikey_record(d), mapping=record.to_redis(d))
            p.set(keys.apikey_digest(record.id), d)
            p.zadd(keys.apikeys_of(tenant), {record.id: now.timestamp()})
            p.sadd(keys.APIKEY_TENANTS, tenant)
            await p.execute()
        return NewKey(secret, record)

    async def lookup(self, key_digest: str) -> KeyRecord | None:
        """The record of the key with this digest (whatever its state), or None."""
        raw = await self.redis.hgetall(keys.apikey_record(key_digest))
        return KeyRecord.from_redis(raw) if raw else None

    async def get(self, key_id: str, tenant: str | None = None) -> KeyRecord | None:
        """Key `key_id`; None when unknown or (with `tenant`) another tenant's."""
        d = await self.redis.get(keys.apikey_digest(key_id))
        if d is None:
            return None
        record = await self.lookup(_text(d))
        if record is None or (tenant is not None and record.tenant != tenant):
            return None
        return record

    async def list(self, tenant: str | None = None) -> list[KeyRecord]:
        tenants = (
            [tenant]
            if tenant is not None
            else sorted(_text(t) for t in await self.redis.smembers(keys.APIKEY_TENANTS))
        )
        out: list[KeyRecord] = []
        for t in tenants:
            for key_id in await self.redis.zrange(keys.apikeys_of(t), 0, -1):
                record = await self.get(_text(key_id))
                if record is not None:
                    out.append(record)
        return out

    async def revoke(self, key_id: str, tenant: str | None = None) -> KeyRecord | None:
        record = await self.get(key_id, tenant)
        if record is None or record.revoked:
            return record  # revoking twice keeps the first time
        d = await self._digest(key_id)
        revoked: Fields = {"revoked": "1", "revoked_at": utcnow().isoformat()}
        await self.redis.hset(keys.apikey_record(d), mapping=revoked)
        return await self.get(key_id)

    async def rotate(
        self,
        key_id: str,
        overlap: timedelta,
        tenant: str | None = None,
        expires_in: timedelta | None = None,
    ) -> tuple[NewKey, KeyRecord] | None:
        """A new key for the same tenant and role (expiring after `expires_in`, if given);
        the old one stops working after `overlap`, so clients can switch over, or at its
        own earlier expiry."""
        old = await self.get(key_id, tenant)
        if old is None:
            return None
        if old.state() != "active":
            raise ValueError(f"key {key_id} is {old.state()}; create a new one instead")
        fresh = await self.create(old.tenant, old.role, expires_in)
        ends = utcnow() + overlap
        if old.expires_at is not None:
            ends = min(ends, old.expires_at)
        ending: Fields = {"expires_at": ends.isoformat(), "rotated_to": fresh.record.id}
        await self.redis.hset(keys.apikey_record(await self._digest(key_id)), mapping=ending)
        updated = await self.get(key_id)
        assert updated is not None
        return fresh, updated

    async def _digest(self, key_id: str) -> str:
        d = await self.redis.get(keys.apikey_digest(key_id))
        if d is None:
            raise KeyError(key_id)
        return _text(d)
