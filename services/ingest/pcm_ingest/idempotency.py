"""`Idempotency-Key` on `POST /v1/memories` and `POST /v1/memories:batch` (issue 33).

A write answered 503 while Redis restarted may have been stored; retried without a key it
came back `reinforced` (a second effect). With a key, the first request claims it in Redis
(`keys.idempotency`: by tenant and key hash, 24 h) with its body's fingerprint and its
clock, and its answer (status and body) is kept there when it is done. A retry within 24 h:

- the answer is kept: the same answer again, nothing done (`Idempotent-Replayed: true`);
- another body under the same key: 422 `idempotency_key_reused`;
- the first is still running (its lease is alive): 409 `idempotency_key_in_progress`, with
  `Retry-After` the seconds its lease has left;
- the first died without an answer (a 5xx, Redis gone mid-way): the retry runs the write
  again as a replay (`WritePlan`): the same memory ids and the same `now`, so a memory the
  first stored is answered as created (its event published again), and a repeat the first
  recorded is not recorded twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from pcm_common.domain.clock import utcnow
from pcm_common.runtime.http import ApiError
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import keys

log = get_logger("ingest.idempotency")

KEEP_S = 24 * 3600
# How long a claimed key waits for its request's answer before a retry may take it over:
# longer than a 1,000-item batch takes to store.
LEASE_S = 30.0
MAX_KEY_CHARS = 255
_IDS = uuid.UUID("0b6f5f5e-8d1c-4b7e-9a51-6c1d2f0e7a33")  # namespace of replayable ids


@dataclass(frozen=True)
class WritePlan:
    """What a keyed write fixes in advance so that running it again changes nothing."""

    key: str
    now: datetime
    replay: bool  # a retry taking over from a request that left no answer

    def memory_id(self, tenant: str, index: int) -> str:
        # The claim's clock too: the same key claimed afresh after 24 h makes new memories.
        return str(uuid.uuid5(_IDS, f"{tenant}\n{self.key}\n{self.now.isoformat()}\n{index}"))


@dataclass(frozen=True)
class Stored:
    """An answer kept for a key."""

    status: int
    body: Any


def valid_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_CHARS or not key.isprintable() or not key.isascii():
        raise ApiError(
            422, "invalid_request", f"Idempotency-Key: 1-{MAX_KEY_CHARS} printable ASCII characters"
        )
    return key


def fingerprint(route: str, body: Any) -> str:
    """The request as the server understood it (its parsed body, canonical JSON)."""
    blob = json.dumps([route, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class IdempotencyKeys:
    def __init__(self, redis: Redis, lease_s: float = LEASE_S) -> None:
        self.redis = redis
        self.lease_s = lease_s

    @staticmethod
    def _name(tenant: str, key: str) -> str:
        return keys.idempotency(tenant, key)

    async def begin(self, tenant: str, key: str, print_: str) -> WritePlan | Stored:
        """Claim `key` for this request (a plan to run it by), or the answer to give."""
        name = self._name(tenant, key)
        now = utcnow()
        claim = {"fp": print_, "now": now.isoformat(), "lease": time.time() + self.lease_s}
        if await self.redis.set(name, json.dumps(claim), nx=True, ex=KEEP_S):
            return WritePlan(key, now, replay=False)
        raw = await self.redis.get(name)
        if raw is None:  # expired between the two calls: claim it again
            return await self.begin(tenant, key, print_)
        held = json.loads(raw)
        if held["fp"] != print_:
            raise ApiError(
                422, "idempotency_key_reused", "this Idempotency-Key came with another request"
            )
        if "status" in held:
            return Stored(int(held["status"]), held["body"])
        left_s = float(held["lease"]) - time.time()
        if left_s > 0:
            # When a retry may take over: a first request that died with Redis (answered
            # 503, its claim kept) holds the key until its lease ends.
            raise ApiError(
                409,
                "idempotency_key_in_progress",
                "the first request is running",
                headers={"Retry-After": str(math.ceil(left_s))},
            )
        held["lease"] = time.time() + self.lease_s
        await self.redis.set(name, json.dumps(held), xx=True, keepttl=True)
        log.info("idempotent_replay", tenant=tenant)
        return WritePlan(key, datetime.fromisoformat(held["now"]), replay=True)

    async def finish(self, tenant: str, key: str, print_: str, status: int, body: Any) -> None:
        """Keep the answer. A failure here (Redis gone) is logged: the claim's lease runs
        out, and a retry replays the write, which changes nothing and answers the same."""
        name = self._name(tenant, key)
        answer = {"fp": print_, "status": status, "body": body}
        try:
            await self.redis.set(name, json.dumps(answer), xx=True, keepttl=True)
        except Exception as exc:
            log.warning("idempotency_answer_not_kept", tenant=tenant, error=repr(exc)[:200])

    async def abandon(self, tenant: str, key: str) -> None:
        """The request failed without an answer: a retry may take over at once."""
        name = self._name(tenant, key)
        try:
            raw = await self.redis.get(name)
            if raw is not None and "status" not in (held := json.loads(raw)):
                held["lease"] = 0
                await self.redis.set(name, json.dumps(held), xx=True, keepttl=True)
        except Exception as exc:  # Redis gone: the lease runs out instead
            log.warning("idempotency_claim_not_released", tenant=tenant, error=repr(exc)[:200])
