"""A retry of a keyed write whose first try still holds the key (running, or cut short by a
Redis outage) is told when to come back: 409 with Retry-After, the seconds the lease has
left; after the lease it takes the write over as a replay."""

from __future__ import annotations

import asyncio

import pytest
from fakeredis import FakeAsyncRedis

from pcm_common.runtime.http import ApiError
from pcm_ingest.idempotency import IdempotencyKeys, WritePlan


async def test_a_held_key_answers_409_with_the_lease_left_then_replays() -> None:
    keys = IdempotencyKeys(FakeAsyncRedis(), lease_s=0.6)
    first = await keys.begin("t", "k1", "fp")
    assert isinstance(first, WritePlan) and not first.replay
    with pytest.raises(ApiError) as held:
        await keys.begin("t", "k1", "fp")
    assert held.value.status_code == 409
    assert held.value.detail["error"] == "idempotency_key_in_progress"
    assert held.value.headers is not None and held.value.headers["Retry-After"] == "1"
    await asyncio.sleep(0.7)
    again = await keys.begin("t", "k1", "fp")
    assert isinstance(again, WritePlan) and again.replay and again.now == first.now
