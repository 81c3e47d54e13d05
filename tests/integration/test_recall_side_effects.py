"""Recall side effects in the sweeper (`SweeperHandlers.on_recalled`) on a real Qdrant Edge
shard and real Redis (DB 13), with strengths written into the payloads and through the
strength overlay (the default): one write per phase, each (event, memory) pair applied
once however often the event comes, and a retry after a failed write applies exactly what
a clean run applies."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from pcm_common.domain.memory import MemoryRecord, State, Strength, text_hash
from pcm_common.messaging.events import MemoryRecalled, RecalledItem
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.redis.strength_overlay import StrengthOverlayStore
from pcm_common.stores.vectors import VectorPoint, VectorStore
from pcm_sweeper.handlers import APPLIED_TTL_S, SweeperHandlers
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS

DIM = 16
TENANT = "side-effects"
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)


@dataclass
class Bus:
    """Records what the handlers publish."""

    sent: list[tuple[str, str, str]] = field(default_factory=list)

    async def publish(self, stream: str, event: Any) -> None:
        self.sent.append((stream, event.memory_id, event.change))

    async def publish_many(self, stream: str, events: Any) -> None:
        for event in events:
            await self.publish(stream, event)


@dataclass
class Res:
    vectors: VectorStore
    redis: Redis
    bus: Bus = field(default_factory=Bus)


def unit(v: np.ndarray) -> list[float]:
    return (v / np.linalg.norm(v)).astype(float).tolist()


def record(n: int, text: str, created: datetime, **extra: Any) -> MemoryRecord:
    """Memory number `n` (its id), saved when it happened."""
    return MemoryRecord(
        id=str(uuid.UUID(int=n)),
        tenant=TENANT,
        text=text,
        text_hash=text_hash(text),
        created_at=created,
        ingested_at=created,
        strength=Strength(t_ref=created),
        **extra,
    )


def memories() -> list[tuple[MemoryRecord, list[float]]]:
    """12 recalled memories (the first two in an episode, one pinned, one archived), a close
    neighbour of each of the top five, two episode mates within the hour and one three
    hours later: the same ids and vectors on every call."""
    rng = np.random.default_rng(11)
    out: list[tuple[MemoryRecord, list[float]]] = []

    def add(i: int, vec: np.ndarray, created: datetime, **extra: Any) -> None:
        out.append((record(i + 1, f"memory {i}", created, **extra), unit(vec)))

    base = [rng.standard_normal(DIM) for _ in range(12)]
    for i, vec in enumerate(base):
        extra: dict[str, Any] = {"episode": "ep"} if i < 2 else {}
        if i == 3:
            extra["pinned"] = True
        if i == 2:
            extra["state"] = State.ARCHIVED
        add(i, vec, T0 + timedelta(minutes=10 * i), **extra)
    for i in range(5):
        add(100 + i, base[i] + 0.2 * rng.standard_normal(DIM), T0 - timedelta(days=3))
    for i, minutes in enumerate((20, 59, 180)):
        add(200 + i, rng.standard_normal(DIM), T0 + timedelta(minutes=minutes), episode="ep")
    return out


def recalled(event_id: str) -> MemoryRecalled:
    items = [
        RecalledItem(memory_id=str(uuid.UUID(int=i + 1)), rank=i, relevance=0.9) for i in range(12)
    ]
    return MemoryRecalled(tenant=TENANT, query="q", now=NOW, items=items, event_id=event_id)


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    r = Redis.from_url(f"{TEST_REDIS}/13")
    yield r
    async for key in r.scan_iter(match="pcm:applied:*:side-*"):
        await r.delete(key)
    async for key in r.scan_iter(match="test:strength:*"):
        await r.delete(key)
    await r.aclose()


@pytest.fixture(params=["payload", "overlay"])
def overlay(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "overlay")


async def handlers_on(path: Path, redis: Redis, overlay: bool) -> tuple[SweeperHandlers, Res]:
    """Handlers over a fresh shard (through an overlay of its own when `overlay`)."""
    edge = EdgeVectorStore(path, dim=DIM)
    store: VectorStore = (
        StrengthOverlayStore(edge, redis, prefix=f"test:strength:{uuid.uuid4().hex}:")
        if overlay
        else edge
    )
    await store.upsert(
        [VectorPoint(id=r.id, vector=v, payload=r.to_payload()) for r, v in memories()]
    )
    res = Res(store, redis)
    return SweeperHandlers(res, SweeperSettings()), res  # type: ignore[arg-type]


async def strengths(res: Res) -> dict[str, tuple[dict[str, Any], str]]:
    ids = [r.id for r, _ in memories()]
    return {
        p.id: (p.payload["strength"], p.payload["state"])
        for p in await res.vectors.get(TENANT, ids)
    }


async def markers(redis: Redis, event_id: str) -> dict[str, tuple[bytes, int]]:
    """Every marker of `event_id` as "pcm:applied:<phase>:<event>:<memory>" -> (value, TTL
    of its phase's hash)."""
    out = {}
    async for key in redis.scan_iter(match=f"pcm:applied:*:{event_id}"):
        ttl = await redis.ttl(key)
        for mid, value in (await redis.hgetall(key)).items():
            out[f"{key.decode()}:{mid.decode()}"] = (value, ttl)
    return out


def record_writes(res: Res, fail_at: int | None = None) -> list[int]:
    """Sizes of the store's payload writes; the write numbered `fail_at` raises instead."""
    sizes: list[int] = []
    original = res.vectors.set_payload_many

    async def write(tenant: str, patches: Sequence[tuple[str, dict[str, Any]]]) -> list[bool]:
        if len(sizes) == fail_at:
            sizes.append(-1)
            raise ConnectionError("store unavailable")
        sizes.append(len(patches))
        return await original(tenant, patches)

    res.vectors.set_payload_many = write  # type: ignore[method-assign]
    return sizes


async def test_redelivery_applies_nothing_twice(
    tmp_path: Path, redis: Redis, overlay: bool
) -> None:
    h, res = await handlers_on(tmp_path / "q", redis, overlay)
    before = await strengths(res)
    event_id = f"side-{uuid.uuid4().hex}"
    sizes = record_writes(res)
    await h.on_recalled(recalled(event_id))
    after, marks, sent = await strengths(res), await markers(redis, event_id), list(res.bus.sent)

    # 11 reinforcements (the pinned memory has nothing to write), then the spread.
    assert sizes == [11, 6]
    ids = [r.id for r, _ in memories()]
    recalled_ids, near, mates = ids[:12], ids[12:17], ids[17:]
    for mid in recalled_ids:
        st, state = after[mid]
        if mid == ids[3]:  # pinned: unchanged, yet marked with ΔS 0
            assert (st, state) == before[mid]
            assert marks[f"pcm:applied:recalled:{event_id}:{mid}"][0] == b"0.0"
            continue
        assert st["n"] == 1 and st["last_recalled_at"] == "2024-03-31T09:00:00Z"
        assert state == "active"  # the archived one is reactivated
        delta = marks[f"pcm:applied:recalled:{event_id}:{mid}"][0]
        old = Strength.model_validate(before[mid][0])
        assert float(delta) == st["s_ref"] - old.at(NOW)
    assert sent == [("pcm.memory.changed", ids[2], "reactivated")]
    # Activation reaches the similar neighbours of the top five but the pinned one and
    # the episode mates within the hour, never the one three hours away.
    spread_to = {m for m in ids if f"pcm:applied:spread:{event_id}:{m}" in marks}
    assert spread_to == {*near[:3], near[4], mates[0], mates[1]}
    for mid in spread_to:
        assert after[mid][0]["n"] == 0 and after[mid][0]["t_ref"] == "2024-03-31T09:00:00Z"
        assert after[mid][0]["s_ref"] > Strength.model_validate(before[mid][0]).at(NOW)
    assert after[near[3]] == before[near[3]] and after[mates[2]] == before[mates[2]]
    assert all(APPLIED_TTL_S - 60 < ttl <= APPLIED_TTL_S for _, ttl in marks.values())

    sizes.clear()
    await h.on_recalled(recalled(event_id))
    await h.on_recalled(recalled(event_id))
    assert await strengths(res) == after
    again = await markers(redis, event_id)
    assert {k: v for k, (v, _) in again.items()} == {k: v for k, (v, _) in marks.items()}
    assert sizes == [] and res.bus.sent == sent
    await res.vectors.close()


@pytest.mark.parametrize("fail_at", [0, 1])
async def test_retry_after_a_failed_write_applies_what_a_clean_run_does(
    tmp_path: Path, redis: Redis, overlay: bool, fail_at: int
) -> None:
    """Write 0 is the reinforcement's, write 1 the spread's: the markers of a phase are set
    once its write is done, so the retry skips that phase (and takes the reinforcement's
    ΔS from its markers for the spread) and ends where a clean run ends."""
    clean, clean_res = await handlers_on(tmp_path / "clean", redis, overlay)
    await clean.on_recalled(recalled(f"side-{uuid.uuid4().hex}"))
    want = await strengths(clean_res)

    h, res = await handlers_on(tmp_path / "q", redis, overlay)
    event_id = f"side-{uuid.uuid4().hex}"
    sizes = record_writes(res, fail_at=fail_at)
    with pytest.raises(ConnectionError):
        await h.on_recalled(recalled(event_id))
    assert sizes == [*[11, 6][:fail_at], -1]
    marked = await markers(redis, event_id)
    # All 12 recalled memories' markers (the pinned one's too) once their write is done.
    assert len([k for k in marked if ":recalled:" in k]) == 12 * fail_at
    assert not [k for k in marked if ":spread:" in k]
    del res.vectors.set_payload_many  # the store's own again
    await h.on_recalled(recalled(event_id))
    assert await strengths(res) == want
    assert res.bus.sent == clean_res.bus.sent
    await clean_res.vectors.close()
    await res.vectors.close()


async def test_activation_spreads_only_to_what_the_asker_sees(tmp_path: Path, redis: Redis) -> None:
    """A spread stays in the seed's own group (`visibility.peers`) and in what the asker
    sees: Ana's memory strengthens Ana's associates only, never Ben's nor the shared ones,
    even for a recall made for the whole tenant."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal(DIM)

    def rec(i: int, user: str | None, minutes: int) -> tuple[MemoryRecord, list[float]]:
        at = T0 + timedelta(minutes=minutes)
        r = record(500 + i, f"shared trip {i}", at, episode="trip", user_id=user)
        return r, unit(base + 0.05 * rng.standard_normal(DIM))

    seed, ana, ben, everyone = rec(0, "ana", 0), rec(1, "ana", 5), rec(2, "ben", 6), rec(3, None, 7)
    edge = EdgeVectorStore(tmp_path / "shard", dim=DIM)
    await edge.upsert(
        [
            VectorPoint(id=r.id, vector=v, payload=r.to_payload())
            for r, v in (seed, ana, ben, everyone)
        ]
    )
    handlers = SweeperHandlers(Res(edge, redis), SweeperSettings())  # type: ignore[arg-type]

    async def spread_to(event_id: str, user: str | None) -> set[str]:
        item = RecalledItem(memory_id=seed[0].id, rank=0, relevance=0.9)
        event = MemoryRecalled(
            tenant=TENANT, now=NOW, items=[item], event_id=event_id, user_id=user
        )
        await handlers.on_recalled(event)
        return {k.rsplit(":", 1)[1] for k in await markers(redis, event_id) if ":spread:" in k}

    assert await spread_to("side-aud-1", "ana") == {ana[0].id}
    # A recall made for the whole tenant (no user) sees every user, and still spreads from
    # Ana's memory to Ana's associates alone.
    assert await spread_to("side-aud-2", None) == {ana[0].id}
    await edge.close()
