"""Issue 33 B: `Idempotency-Key` on writes, and the outbox that gets a stored memory's event
to the stream when its publish failed."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
from redis.asyncio import Redis

from pcm_common.messaging.events import MemoryWritten
from pcm_common.messaging.outbox import note, publish_owed
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.keys import OUTBOX_WRITTEN
from pcm_common.stores.vectors import ScoredPoint
from tests.conftest import KEYS, TEST_REDIS_URL


def _key() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


async def test_a_retry_gets_the_first_answer_and_changes_nothing(
    client_a: httpx.AsyncClient,
) -> None:
    key = _key()
    body = {"text": f"Idempotent note {uuid.uuid4().hex[:6]}: Mira renewed the Oslo lease."}
    first = await client_a.post("/v1/memories", json=body, headers=key)
    again = await client_a.post("/v1/memories", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and first.json()["status"] == "created"
    assert again.headers["Idempotent-Replayed"] == "true"
    rec = (await client_a.get(f"/v1/memories/{first.json()['id']}")).json()
    assert rec["repeats"] == []  # the retry was no repeat
    # Without the key the same text is a repeat, as before.
    plain = await client_a.post("/v1/memories", json=body)
    assert plain.json() == {"id": first.json()["id"], "status": "reinforced"}


async def test_a_key_with_another_body_is_refused(client_a: httpx.AsyncClient) -> None:
    key = _key()
    ok = await client_a.post(
        "/v1/memories", json={"text": "Ivo booked the Lyon venue."}, headers=key
    )
    assert ok.status_code == 201
    other = await client_a.post("/v1/memories", json={"text": "Something else."}, headers=key)
    assert other.status_code == 422 and other.json()["error"] == "idempotency_key_reused"
    batch = await client_a.post(
        "/v1/memories:batch",
        json={"memories": [{"text": "Ivo booked the Lyon venue."}]},
        headers=key,
    )
    assert batch.status_code == 422  # the route is part of the request


async def test_keys_are_per_tenant_and_errors_are_kept(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    key = _key()
    body = {"memories": [{"text": "Tenant note: the Graz office opens at 8."}, {"text": "Two."}]}
    a = await client_a.post("/v1/memories:batch", json=body, headers=key)
    b = await client_b.post("/v1/memories:batch", json=body, headers=key)
    assert a.status_code == b.status_code == 201
    assert {r["id"] for r in a.json()["results"]}.isdisjoint(r["id"] for r in b.json()["results"])
    secret = {"text": "my key is AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCY"}
    key = _key()
    first = await client_a.post("/v1/memories", json=secret, headers=key)
    again = await client_a.post("/v1/memories", json=secret, headers=key)
    assert first.status_code == again.status_code == 422
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    bad = await client_a.post("/v1/memories", json=secret, headers={"Idempotency-Key": ""})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_request"


async def _claim(tenant: str, key: str) -> tuple[Redis, str]:
    redis = Redis.from_url(TEST_REDIS_URL)
    return redis, rkeys.idempotency(tenant, key)


async def test_a_retry_after_a_lost_answer_replays_without_a_second_effect(
    client_a: httpx.AsyncClient,
) -> None:
    """The first request stored its memory (and a repeat of an older one) but its answer
    never reached Redis (Redis restarting): the retry answers as the first would have."""
    old = await client_a.post("/v1/memories", json={"text": "Replay: Petra runs on Mondays."})
    key = _key()
    body = {"memories": [{"text": "Replay: Petra runs on Mondays."}, {"text": "Replay: new one."}]}
    first = await client_a.post("/v1/memories:batch", json=body, headers=key)
    assert [r["status"] for r in first.json()["results"]] == ["reinforced", "created"]
    redis, name = await _claim(KEYS["key-a"], key["Idempotency-Key"])
    try:
        held = json.loads(await redis.get(name))
        # The claim as `begin` left it, with no answer and its lease run out; its clock is
        # the first request's, the new memory's ingest time.
        new = (await client_a.get(f"/v1/memories/{first.json()['results'][1]['id']}")).json()
        claim = {"fp": held["fp"], "now": new["ingested_at"], "lease": 0}
        await redis.set(name, json.dumps(claim), keepttl=True)
        again = await client_a.post("/v1/memories:batch", json=body, headers=key)
        assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
        assert again.json() == first.json()
        rec = (await client_a.get(f"/v1/memories/{old.json()['id']}")).json()
        assert len(rec["repeats"]) == 1  # the first's repeat, not a second
        assert json.loads(await redis.get(name))["status"] == 201
    finally:
        await redis.aclose()


class _Vectors:
    def __init__(self, payloads: dict[str, dict[str, Any]]) -> None:
        self.payloads = payloads

    async def get(self, tenant: str, ids: list[str], fields: object = None) -> list[ScoredPoint]:
        return [
            ScoredPoint(id=i, score=1.0, payload=self.payloads[i])
            for i in ids
            if i in self.payloads
        ]


class _Bus:
    def __init__(self) -> None:
        self.sent: list[MemoryWritten] = []

    async def publish(self, stream: str, event: MemoryWritten) -> None:
        self.sent.append(event)


class _Res:
    def __init__(self, redis: Redis, payloads: dict[str, dict[str, Any]]) -> None:
        self.redis, self.vectors, self.bus = redis, _Vectors(payloads), _Bus()


async def test_the_outbox_publishes_what_a_failed_write_owed(client_a: httpx.AsyncClient) -> None:
    stored = await client_a.post("/v1/memories", json={"text": "Outbox: Lars fixed the pump."})
    payload = (await client_a.get(f"/v1/memories/{stored.json()['id']}")).json()
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        # A successful write crossed its note out.
        member = json.dumps([KEYS["key-a"], stored.json()["id"]])
        assert await redis.zscore(OUTBOX_WRITTEN, member) is None
        res = _Res(redis, {stored.json()["id"]: payload})
        await note(redis, KEYS["key-a"], [stored.json()["id"], "never-stored"])
        assert await publish_owed(res, grace_s=20) == 0  # still in flight, maybe
        await redis.zadd(OUTBOX_WRITTEN, {member: time.time() - 30})
        await redis.zadd(OUTBOX_WRITTEN, {json.dumps([KEYS["key-a"], "never-stored"]): 1})
        assert await publish_owed(res, grace_s=20) == 1
        assert [e.memory_id for e in res.bus.sent] == [stored.json()["id"]]
        assert await redis.zcard(OUTBOX_WRITTEN) == 0
    finally:
        await redis.aclose()
