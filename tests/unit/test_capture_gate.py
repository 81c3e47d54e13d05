"""The predictive capture gate (`pcm_ingest.capture_gate`) on the write service over the
in-memory doubles (Redis from fakeredis, hashed word vectors): what is skipped and
buffered, what is stored with its salience, and the model's guess through litellm's
`mock_response`."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import fakeredis
import pytest

from pcm_common.domain.strength import TIER_STRENGTH
from pcm_common.ports import Ports
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.capture_buffer import CaptureBuffer
from pcm_common.testing import HashEmbedder, MemoryVectorStore, TestBus
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import IngestService
from pcm_ingest.settings import IngestSettings

FACT = "The payments worker retries declined cards after 30 minutes."


@pytest.fixture
async def redis() -> AsyncIterator[fakeredis.FakeAsyncRedis]:
    r = fakeredis.FakeAsyncRedis()
    yield r
    await r.aclose()


def service(redis: fakeredis.FakeAsyncRedis, **settings: Any) -> IngestService:
    ports = Ports(redis=redis, vectors=MemoryVectorStore(), bus=TestBus(), embedder=HashEmbedder())
    return IngestService(ports, IngestSettings(firewall_workers=0, **settings))


def hook(text: str, session: str = "s1") -> MemoryIn:
    return MemoryIn(
        text=text,
        source="hook",
        scope="project",
        project="api",
        metadata={"hook": "UserPromptSubmit", "session_id": session},
    )


async def test_a_repeat_in_its_session_is_skipped_buffered_and_said(
    redis: fakeredis.FakeAsyncRedis,
) -> None:
    svc, t = service(redis), f"t-{uuid.uuid4().hex[:6]}"
    (first,) = await svc.store(t, [hook(FACT)])
    assert first.status == "created" and first.salience is not None and first.salience > 0.45
    (again,) = await svc.store(t, [hook(FACT)])
    assert (again.id, again.status, again.reason) == (None, "skipped", "low_salience")
    assert again.salience is not None and again.salience < 0.45
    ((_, entry),) = await CaptureBuffer(redis).skipped(t)
    assert entry.text == FACT and entry.project == "api" and entry.session == "s1"

    # Explicit stores are never gated: the same text is stored (reinforced) with no salience.
    (explicit,) = await svc.store(t, [MemoryIn(text=FACT, scope="project", project="api")])
    assert explicit.status == "reinforced" and explicit.salience is None


async def test_a_kept_capture_carries_its_salience_into_its_strength(
    redis: fakeredis.FakeAsyncRedis,
) -> None:
    svc, t = service(redis), f"t-{uuid.uuid4().hex[:6]}"
    (r,) = await svc.store(t, [hook(FACT)])
    (point,) = await svc.ports.vectors.get(t, [str(r.id)])
    assert point.payload["salience"] == r.salience
    assert point.payload["strength"]["s_ref"] > TIER_STRENGTH["normal"]


async def test_a_blocked_secret_is_never_kept_in_the_buffer(
    redis: fakeredis.FakeAsyncRedis,
) -> None:
    svc, t = service(redis, capture_salience_threshold=1.0), f"t-{uuid.uuid4().hex[:6]}"
    (r,) = await svc.store(t, [hook("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")])
    assert r.status == "skipped"
    assert await CaptureBuffer(redis).skipped(t) == []
    assert [k async for k in redis.scan_iter(match=rkeys.capture_context(t, "*"))] == []


async def test_the_models_guess_predicts_the_capture(redis: fakeredis.FakeAsyncRedis) -> None:
    guess = "Deploys to staging need the release branch tagged first."
    svc = service(
        redis,
        capture_predict_model="openai/gpt-4o-mini",
        capture_predict_options={"mock_response": guess},
    )
    t = f"t-{uuid.uuid4().hex[:6]}"
    (opening,) = await svc.store(t, [hook(FACT)])  # no context yet: no guess asked
    assert opening.status == "created"
    (r,) = await svc.store(t, [hook(guess)])
    assert r.status == "skipped" and r.reason == "low_salience"
    # Without the model the same capture is news.
    plain = service(fakeredis.FakeAsyncRedis())
    await plain.store(t, [hook(FACT)])
    (kept,) = await plain.store(t, [hook(guess)])
    assert kept.status == "created"


async def test_the_gate_off_stores_what_the_word_list_lets_through(
    redis: fakeredis.FakeAsyncRedis,
) -> None:
    svc, t = service(redis, capture_salience=False), f"t-{uuid.uuid4().hex[:6]}"
    await svc.store(t, [hook(FACT)])
    (r,) = await svc.store(t, [hook(FACT)])
    assert r.status == "reinforced" and r.salience is None


async def test_an_erasure_removes_the_owners_buffered_captures_and_contexts(
    redis: fakeredis.FakeAsyncRedis,
) -> None:
    from pcm_common.data.erasure_scrub import Asker
    from pcm_common.stores.redis.capture_buffer import scrub

    svc, t = service(redis), f"t-{uuid.uuid4().hex[:6]}"
    other = MemoryIn(text=FACT, source="hook", scope="project", project="web")
    await svc.store(t, [hook(FACT), hook(FACT), other, other])
    assert len(await CaptureBuffer(redis).skipped(t)) == 2
    assert await scrub(redis, t, Asker(project="api").asked) == 2  # a buffer entry, a context
    ((_, left),) = await CaptureBuffer(redis).skipped(t)
    assert left.project == "web"
    assert len([k async for k in redis.scan_iter(match=rkeys.capture_context(t, "*"))]) == 1
