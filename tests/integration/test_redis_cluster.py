"""PCM on a Redis Cluster: three primaries on loopback that this module starts
(`tests/redis_cluster.py`). Each store class runs its scripts, MULTIs and multi-key commands
against the cluster, where keys of two slots in one of them fail with CROSSSLOT; then the
all-in-one server runs on the cluster and a write goes through the streams to a recall.
docs/cluster.md lists every key family and every multi-key operation."""

from __future__ import annotations

import asyncio
import json
import os
import random
import uuid
import warnings
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from pcm_cli.testing import running_server
from pcm_client import AsyncPcmClient
from pcm_common.access.apikeys import KeyStore
from pcm_common.access.ratelimit import RateLimiter
from pcm_common.data.erasure_scrub import scrub_keys
from pcm_common.messaging import outbox
from pcm_common.messaging.bus import Bus, pipeline_status, trim_processed
from pcm_common.messaging.events import STREAM_DLQ, STREAM_WRITTEN, MemoryWritten
from pcm_common.messaging.stream_batches import Outcome
from pcm_common.runtime.config import PcmSettings
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.redis import job_runs, keys, tombstones
from pcm_common.stores.redis.capture_buffer import Buffered, CaptureBuffer, Recent
from pcm_common.stores.redis.connect import is_cluster, open_redis
from pcm_common.stores.redis.feedback import FeedbackStore, RecallRecord, pack_vector
from pcm_common.stores.redis.lability import Claim, Lability, LabilityRules
from pcm_common.stores.redis.locks import KeyLocks
from pcm_common.stores.redis.routines import RoutineIndex
from pcm_common.stores.redis.strength_overlay import StrengthOverlayStore
from pcm_common.stores.vectors import VectorPoint
from pcm_ingest.idempotency import IdempotencyKeys, Stored, WritePlan
from pcm_inspector.dead_letters import retry
from tests.conftest import KEYS, service_env
from tests.redis_cluster import loopback_cluster

pytestmark = pytest.mark.cluster

DIM = 8


@pytest.fixture(scope="module")
async def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    async with loopback_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url


@pytest.fixture
async def redis(cluster_url: str) -> AsyncIterator[Redis]:
    client = open_redis(cluster_url)
    assert is_cluster(client)
    yield client
    await client.aclose()


def _tenant() -> str:
    return f"cl-{uuid.uuid4().hex[:8]}"


async def test_the_cluster_spreads_slots_over_three_primaries(redis: Redis) -> None:
    assert isinstance(redis, RedisCluster)
    await redis.initialize()
    primaries = redis.get_primaries()
    assert len(primaries) == 3
    # Tenants land on different nodes: per-tenant tags spread the load.
    nodes = {redis.get_node_from_key(keys.tombstones(f"t{n}")).name for n in range(30)}
    assert len(nodes) == 3


async def test_a_cross_slot_script_is_refused_here(redis: Redis) -> None:
    """The check the other tests rely on: this cluster does refuse two slots in a script."""
    a, b = "pcm:x:{a}", "pcm:x:{b}"
    assert key_slot(a.encode()) != key_slot(b.encode())
    with pytest.raises(Exception, match=r"CROSSSLOT|same slot"):
        await redis.eval("return redis.call('MGET', KEYS[1], KEYS[2])", 2, a, b)


async def test_locks_take_and_release_many_keys(redis: Redis) -> None:
    tenant = _tenant()
    locks = KeyLocks(redis, ttl_ms=5000, wait_s=2)
    names = [keys.copy_lock(tenant, ("t", str(n))) for n in range(5)]
    names.append(keys.memory_lock(tenant, "m1"))
    async with locks.hold(names):
        held = [keys.KEY_LOCK_PREFIX + n for n in names]
        assert all([await redis.exists(k) for k in held])
    assert not any([await redis.exists(keys.KEY_LOCK_PREFIX + n) for n in names])
    # Names of two tenants (two slots) are released one slot at a time.
    other = keys.memory_lock(_tenant(), "m1")
    async with locks.hold([names[0], other]):
        pass
    assert not await redis.exists(keys.KEY_LOCK_PREFIX + other)


async def test_lability_marks_reads_and_claims(redis: Redis) -> None:
    tenant = _tenant()
    lab = Lability(redis, LabilityRules(labile_s=60, cooldown_s=30, max_per_recall=2))
    await lab.mark(tenant, ["m1", "m2", "m3"], "recall-1")
    assert await lab.labile(tenant, ["m1", "m2", "m9"]) == {"m1": "recall-1", "m2": "recall-1"}
    assert await lab.claim(tenant, "m1", "recall-1") is Claim.CLAIMED
    assert await lab.claim(tenant, "m1", "recall-1") is Claim.COOLING
    assert await lab.claim(tenant, "m2", "recall-1") is Claim.CLAIMED
    assert await lab.claim(tenant, "m3", "recall-1") is Claim.SPENT
    assert await lab.claim(tenant, "m3", "recall-2") is Claim.NOT_LABILE
    await lab.release(tenant, "m1")
    assert not await redis.exists(keys.labile_cooldown(tenant, "m1"))


async def test_the_routine_index_under_watch_and_multi(redis: Redis) -> None:
    tenant = _tenant()
    index = RoutineIndex(redis)
    t0 = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    day = 86_400.0
    items = [(f"m{n}", [t0 + n * day], {}) for n in range(4)]
    placed = await index.record_many(tenant, items)
    assert len(placed) == 4
    family = {"m0": [t0]}
    (routine,) = await index.record_many(tenant, [("m9", [t0 + 9 * day], family)])
    assert routine is not None
    assert (await index.routine_of(tenant, ["m9"]))["m9"] == routine
    assert await index.add_times(tenant, "m9", [t0 + 10 * day])
    await index.forget(tenant, "m9")
    assert (await index.routine_of(tenant, ["m9"]))["m9"] is None
    await index.mark_built(tenant)
    assert await index.built(tenant)
    assert await index.size(tenant) >= 1


async def test_capture_buffer_context_and_scrub(redis: Redis) -> None:
    tenant = _tenant()
    buf = CaptureBuffer(redis)
    owner = {"user_id": "ana", "workspace": None, "project": None}
    await buf.remember(tenant, "s1", [Recent("hello", [0.1, 0.2])], owner)
    assert [r.text for r in await buf.recent(tenant, "s1")] == ["hello"]
    item = Buffered(
        text="skipped",
        user_id="ana",
        scope="user",
        workspace="",
        project="",
        created_at=datetime.now(UTC).isoformat(),
        salience=0.1,
    )
    await buf.buffer(tenant, [item])
    skipped = await buf.skipped(tenant)
    assert [b.text for _, b in skipped] == ["skipped"]
    assert await buf.drop(tenant, [m for m, _ in skipped]) == 1


async def test_strength_overlay_patch_and_fold(redis: Redis, tmp_path: Path) -> None:
    tenant = _tenant()
    store = StrengthOverlayStore(EdgeVectorStore(tmp_path / "edge", dim=DIM), redis)
    rng = np.random.default_rng(7)
    ids = [str(uuid.uuid4()) for _ in range(5)]
    await store.upsert(
        [
            VectorPoint(id=i, vector=rng.normal(size=DIM).tolist(), payload={"tenant": tenant})
            for i in ids
        ]
    )
    strength = {"s_ref": 0.7, "t_ref": "2024-01-01T00:00:00Z", "n": 2}
    done = await store.set_payload_many(tenant, [(i, {"strength": strength}) for i in ids])
    assert all(done)
    assert await redis.hlen(keys.strength(tenant)) == 5
    assert await store.fold_strengths(tenant) == 5
    assert await redis.hlen(keys.strength(tenant)) == 0
    (point,) = await store.get(tenant, ids[:1])
    assert point.payload["strength"] == strength


async def test_idempotency_claim_answer_and_replay(redis: Redis) -> None:
    tenant = _tenant()
    idem = IdempotencyKeys(redis)
    plan = await idem.begin(tenant, "k1", "print")
    assert isinstance(plan, WritePlan)
    await idem.finish(tenant, "k1", "print", 201, {"id": "m1"})
    again = await idem.begin(tenant, "k1", "print")
    assert isinstance(again, Stored) and again.body == {"id": "m1"}


async def test_outbox_owes_and_crosses_out(redis: Redis) -> None:
    tenant = _tenant()
    await outbox.note(redis, tenant, ["m1", "m2"])
    assert await redis.zscore(keys.OUTBOX_WRITTEN, json.dumps([tenant, "m1"])) is not None
    await outbox.cross_out(redis, tenant, ["m1", "m2"])
    assert await redis.zscore(keys.OUTBOX_WRITTEN, json.dumps([tenant, "m1"])) is None


async def test_feedback_transactions(redis: Redis) -> None:
    tenant = _tenant()
    store = FeedbackStore(redis, ttl_s=600, max_cues=1)
    for n in range(2):
        rec = RecallRecord(
            recall_id=f"r{n}",
            at=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=n),
            cue=pack_vector([0.1] * 4),
            delivered=["m1"],
        )
        await store.remember(tenant, rec)
        await store.save(tenant, rec, {"m1": 1.0})
    await store.set_memory_signal(tenant, "m2", "wrong")
    version, cues, memory = await store.load(tenant)
    assert version == 3 and len(cues) == 1 and memory == {"m2": "wrong"}


async def test_api_keys_rate_limit_job_runs_and_tombstones(redis: Redis) -> None:
    tenant = _tenant()
    store = KeyStore(redis)
    made = await store.create(tenant, "data")
    assert (await store.get(made.record.id, tenant)) is not None
    limiter = RateLimiter(redis, per_s=1, burst=2, tenant_per_min=100)
    answers = [await limiter.check(made.record.id, tenant) for _ in range(3)]
    assert answers[:2] == [None, None] and answers[2] is not None
    now = datetime.now(UTC)
    run = job_runs.JobRun(
        job="decay", trigger="request", started_at=now, finished_at=now, duration_ms=1, outcome="ok"
    )
    await job_runs.record(redis, tenant, run)
    assert [r.job for r in (await job_runs.last_runs(redis, tenant, ["decay"]))["decay"]] == [
        "decay"
    ]
    await tombstones.record(redis, tenant, ["m1", "m2"])
    assert await tombstones.deleted(redis, tenant, ["m1", "m3"]) == {"m1"}


async def test_erasure_scrub_scans_every_primary(redis: Redis) -> None:
    tenant = _tenant()
    gone = str(uuid.uuid4())
    await redis.set(keys.graph_republished(tenant, gone), 1)
    await redis.set(keys.idempotency(tenant, "a"), json.dumps({"body": {"id": gone}}))
    episode = keys.episode_stream(tenant, "user", None, None, "ana")
    await redis.set(episode, "x")
    removed = await scrub_keys(redis, tenant, {gone}, [episode])
    assert removed >= 3
    assert not await redis.exists(keys.graph_republished(tenant, gone))
    assert not await redis.exists(episode)


async def test_the_bus_publishes_consumes_and_trims_on_the_cluster(cluster_url: str) -> None:
    stream, group = f"test.cluster.{uuid.uuid4().hex[:6]}", "g"
    settings = PcmSettings().model_copy(update={"redis_url": cluster_url, "consumer_name": "c1"})
    bus = Bus(settings)
    assert bus.cluster
    seen: list[str] = []

    async def handle(events: list[MemoryWritten]) -> list[Outcome]:
        seen.extend(e.memory_id for e in events)
        return [None] * len(events)

    await bus.redis.xgroup_create(stream, group, id="0", mkstream=True)
    bus.consume_batch(stream, group, MemoryWritten, handle)
    await bus.start()
    try:
        events = [
            MemoryWritten(tenant="t", memory_id=f"m{i}", text="x", created_at="2024-01-01")
            for i in range(5)
        ]
        await bus.publish_many(stream, events)
        for _ in range(200):
            if len(seen) == 5:
                break
            await asyncio.sleep(0.05)
        assert sorted(seen) == [f"m{i}" for i in range(5)]
        await asyncio.sleep(0.2)  # acknowledgements
        # Everything before the last delivered entry goes (XTRIM MINID keeps that one).
        assert (await trim_processed(bus.redis, {stream: [group]})).get(stream) == 4
        status = await pipeline_status(bus.redis)
        assert isinstance(status, dict)
    finally:
        await bus.stop()


async def test_a_dead_letter_goes_back_to_its_stream_on_the_cluster(cluster_url: str) -> None:
    """The one operation on two streams (two slots): published, then removed from
    `pcm.dlq` in a MULTI of its own; a second retry finds no letter."""
    settings = PcmSettings().model_copy(update={"redis_url": cluster_url, "consumer_name": "c2"})
    bus = Bus(settings)
    tenant = _tenant()
    event = MemoryWritten(tenant=tenant, memory_id="m1", text="x", created_at="2024-01-01")
    try:
        await bus._dead_letter(
            STREAM_WRITTEN, "graph-extractor", "1-0", event.model_dump(mode="json"), "boom", 3
        )
        letters = await bus.redis.xrange(STREAM_DLQ)
        letter_id = next(
            i.decode() for i, f in letters if json.loads(f[b"data"])["body"]["tenant"] == tenant
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # FastStream warns when it drops a pipeline
            out = await retry(bus.redis, bus, tenant, letter_id)
        assert out is not None and out["stream"] == STREAM_WRITTEN
        back = await bus.redis.xrange(STREAM_WRITTEN, out["published_id"], out["published_id"])
        assert len(back) == 1
        assert not await bus.redis.xrange(STREAM_DLQ, letter_id, letter_id)
        assert await retry(bus.redis, bus, tenant, letter_id) is None
    finally:
        await bus.stop()


async def test_the_server_writes_and_recalls_on_the_cluster(
    cluster_url: str, tmp_path: Path
) -> None:
    """The all-in-one server with `redis+cluster://`: a write passes ingest's locks,
    idempotency and episodes, its event the streams' groups, and the recall finds it."""
    env = service_env(tmp_path, redis_url=cluster_url)
    word = f"zebrafinch{random.randint(1000, 9999)}"
    saved = {k: os.environ.get(k) for k in env}  # `running_server` sets them for good
    try:
        await _write_and_recall(env, word)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    probe = open_redis(cluster_url)
    try:
        assert await probe.sismember(keys.TENANTS, KEYS["key-a"])
    finally:
        await probe.aclose()


async def _write_and_recall(env: dict[str, str], word: str) -> None:
    async with running_server(env) as url:
        pcm = AsyncPcmClient(url, api_key="key-a")
        try:
            stored = await pcm.store(f"The {word} nests by the harbour.", idempotency_key="w1")
            assert stored.id
            again = await pcm.store(f"The {word} nests by the harbour.", idempotency_key="w1")
            assert again.id == stored.id
            found = await pcm.recall(f"Where does the {word} nest?", k=5)
            assert stored.id in [c.memory_id for c in found.situational_context]
            for _ in range(200):
                status = await pcm.pipeline()
                if not status["pending"]:
                    break
                await asyncio.sleep(0.1)
            assert not status["pending"], status
        finally:
            await pcm.aclose()
