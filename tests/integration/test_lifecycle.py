"""Memory lifecycle end to end on real Redis (DB 11), Qdrant Edge in tmp and the graph server:
reinforcement keeps recalled memories, decay + demotion archive the rest (never delete),
spreading activation reaches neighbours, consolidation builds episode records, repair
restores missing vectors and downstream work. Jobs run at simulated times through
POST /v1/jobs/{name}. The tests talk to the server through pcm-client."""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pcm_cli.testing import running_server, settle
from pcm_client import NO_RETRY, AsyncPcmClient, JobRunning
from pcm_common.domain.strength import decayed
from pcm_common.messaging.events import STREAM_RECALLED, MemoryRecalled, RecalledItem
from pcm_common.runtime.resources import Resources
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.vectors import VectorPoint
from pcm_sweeper.jobs import Jobs
from tests.conftest import NEO4J_URI, TEST_REDIS

RUN = uuid.uuid4().hex[:8]
TENANTS = ("fade", "race", "spread", "episode", "repair", "locks")
KEYS = {f"life-{t}": f"life-{t}-{RUN}" for t in TENANTS}
T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def at(**delta: float) -> datetime:
    return T0 + timedelta(**delta)


class Lifecycle:
    def __init__(self, url: str, app: Any) -> None:
        self.url = url
        self.jobs: Jobs = app.state.jobs
        self.res: Resources = self.jobs.res

    def client(self, tenant: str) -> AsyncPcmClient:
        return AsyncPcmClient(self.url, f"life-{tenant}", timeout=60, retry=NO_RETRY)


@pytest.fixture(scope="module")
async def life(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Lifecycle]:
    """A server of our own (Redis DB 11, own Qdrant path), with a handle on its resources
    so a test can damage a stored vector the way a crash or an operator could."""
    import pcm_cli.app as app_module

    env = {
        "REDIS_URL": f"{TEST_REDIS}/11",
        "NEO4J_URI": NEO4J_URI,
        "PCM_QDRANT_PATH": str(tmp_path_factory.mktemp("lifecycle") / "qdrant"),
        "PCM_API_KEYS": json.dumps(KEYS),
        "PCM_CLAIM_IDLE_MS": "2000",
        "PCM_JOB_INTERVAL_S": "3600",  # jobs run only when a test asks
        "PCM_LOG_LEVEL": "WARNING",
    }
    saved = dict(os.environ)
    original = app_module.dev_app
    built: list[Any] = []

    def capturing_dev_app() -> Any:
        app = original()
        built.append(app)
        return app

    app_module.dev_app = capturing_dev_app
    try:
        async with running_server(env) as url:
            yield Lifecycle(url, built[0])
    finally:
        app_module.dev_app = original
        os.environ.clear()
        os.environ.update(saved)


async def store(c: AsyncPcmClient, text: str, created: datetime, **extra: Any) -> str:
    r = await c.store(text, created_at=created, **extra)
    assert r.status == "created" and r.id, r
    return r.id


async def get(c: AsyncPcmClient, mid: str) -> dict[str, Any]:
    """The memory's whole record, as the server sent it."""
    return (await c.get(mid)).model_dump(mode="json", exclude_unset=True)


async def recall(c: AsyncPcmClient, query: str, now: datetime, **extra: Any) -> list[str]:
    out = await c.recall(query, now=now, **extra)
    return [item.memory_id for item in out.situational_context]


async def set_state(c: AsyncPcmClient, mid: str, state: Any) -> None:
    assert (await c.update(mid, state=state)).state == state


async def job(c: AsyncPcmClient, name: str, now: datetime) -> int:
    return int((await c.run_job(name, now)).changed)


def strength_at(rec: dict[str, Any], now: datetime) -> float:
    st = rec["strength"]
    t_ref = datetime.fromisoformat(st["t_ref"])
    return decayed(st["s_ref"], t_ref, st["n"], now, rec["pinned"])


async def test_recalled_memory_keeps_strength_unrecalled_one_is_archived(
    life: Lifecycle,
) -> None:
    async with life.client("fade") as c:
        kept = await store(c, "Ivan plays the cello in the city orchestra.", T0)
        # Saved hours apart: memories saved within 60 minutes share an episode, and
        # spreading activation would keep this one alive with the other's recalls.
        faded = await store(
            c, "Harold repaired the vintage motorcycle engine in his garage.", at(hours=3)
        )
        await settle(c)
        for day in (2, 5, 10, 20, 35, 50, 70, 90, 110):
            got = await recall(c, "Which instrument does Ivan play in the orchestra?", at(days=day))
            assert got[:1] == [kept]
            await settle(c)

        end = at(days=120)
        kept_rec, faded_rec = await get(c, kept), await get(c, faded)
        assert kept_rec["strength"]["n"] == 9  # one per recall: each in its own 24 h window
        assert strength_at(kept_rec, end) > 0.6  # the savings effect keeps it strong
        assert strength_at(faded_rec, end) < 0.05

        assert await job(c, "demotion", at(days=80)) == 0  # weak, but not 90 days yet
        assert await job(c, "demotion", end) == 1
        assert await job(c, "demotion", end) == 0  # idempotent
        assert (await get(c, kept))["state"] == "active"
        assert (await get(c, faded))["state"] == "archived"  # demoted, not deleted

        # A weak cue (cosine ~0.38, no word in common, and another memory matches it
        # better) no longer reaches the demoted memory unless archived memories are asked
        # for, and leaves it archived; a strong cue (close, or the best match of the dense
        # or the lexical list) reaches it.
        await store(c, "Grandpa restored an old wall clock at home.", at(days=100))
        await settle(c)
        vague = "Who fixed something old at home?"
        assert faded not in await recall(c, vague, end)
        await settle(c)
        assert (await get(c, faded))["state"] == "archived"
        assert faded in await recall(c, vague, end, include_archived=True)
        for strong in (
            "Who repaired the motorcycle engine?",
            "What has been happening in the garage?",
        ):
            # Each recall that returns it reactivates it (below): archive it again first,
            # so that the cue alone is what reaches it.
            await settle(c)
            await set_state(c, faded, "archived")
            assert faded in await recall(c, strong, end)
        # Recalled, it is in use again: reinforced back above the demotion threshold it is
        # active, and even the weak cue reaches it now.
        await settle(c)
        assert (await get(c, faded))["state"] == "active"
        assert faded in await recall(c, vague, end)


async def test_a_recall_landing_during_demotion_keeps_the_memory_active(
    life: Lifecycle,
) -> None:
    """The sweeper applies a recall's reinforcement while a demotion pass may be between
    reading a weak memory and archiving it: the pass reads it again after its write and
    gives the state back, so a memory just recalled is never left archived."""
    from pcm_common.domain.memory import StrengthView

    tenant = KEYS["life-race"]
    end = at(days=200)
    async with life.client("race") as c:
        mid = await store(c, "Quentin once lent a ladder to the neighbours.", T0)
        await settle(c)
        vectors = life.res.vectors
        original = vectors.set_payload

        async def recall_lands_first(t: str, memory_id: str, patch: dict[str, Any]) -> None:
            if patch.get("state") == "archived":  # the demotion's write: a recall got in first
                (p,) = await vectors.get(t, [memory_id], fields=StrengthView.FIELDS)
                view = StrengthView.model_validate(p.payload)
                reinforced = view.strength.reinforced(end, recalled=True)
                await original(t, memory_id, view.strength_patch(reinforced, end))
            await original(t, memory_id, patch)

        vectors.set_payload = recall_lands_first  # type: ignore[method-assign]
        try:
            assert await life.jobs.demote(tenant, end) == 0
        finally:
            vectors.set_payload = original  # type: ignore[method-assign]
        rec = await get(c, mid)
        assert rec["state"] == "active" and rec["strength"]["last_recalled_at"] is not None
        # Without a recall, the same pass archives it.
        assert await job(c, "demotion", at(days=400)) == 1
        assert (await get(c, mid))["state"] == "archived"


async def test_recall_side_effects_reinforce_and_spread_to_neighbours(life: Lifecycle) -> None:
    async with life.client("spread") as c:
        bakery = "Gina runs a bakery on Elm Street that sells sourdough bread every Saturday."
        x = await store(c, bakery, T0, episode="market-day")
        # cos(x, y) ≈ 0.76: a similarity neighbour, yet no near-duplicate (< 0.94).
        y = await store(
            c, "Gina's bakery on Elm Street also bakes rye loaves and cinnamon rolls.", T0
        )
        z = await store(
            c,
            "We talked about the weather forecast for the weekend hike.",
            at(minutes=10),
            episode="market-day",
        )
        late = await store(
            c, "Later we repainted the garden fence blue.", at(hours=3), episode="market-day"
        )
        control = await store(c, "Harold repaired the vintage motorcycle engine.", T0)
        await settle(c)

        now = at(days=10)
        got = await recall(c, "What bread does Gina's bakery sell on Saturdays?", now, k=1)
        assert got == [x]
        await settle(c)

        s_x = decayed(0.6, T0, 0, now)
        delta_x = 0.5 * (1 - s_x)  # first recall: r = 0
        rx = await get(c, x)
        assert rx["strength"]["n"] == 1
        assert rx["strength"]["s_ref"] == pytest.approx(s_x + delta_x, abs=1e-6)

        # Similarity neighbour: ΔS = β·cos·ΔS_x with 0.65 ≤ cos < 1.
        ry = await get(c, y)
        gain_y = ry["strength"]["s_ref"] - decayed(0.6, T0, 0, now)
        assert 0.5 * 0.65 * delta_x <= gain_y <= 0.5 * delta_x
        assert ry["strength"]["n"] == 0 and ry["strength"]["last_recalled_at"] is None
        assert datetime.fromisoformat(ry["strength"]["t_ref"]) == now

        # Same episode within 60 minutes: w = 0.7.
        rz = await get(c, z)
        expected_z = decayed(0.6, at(minutes=10), 0, now) + 0.5 * 0.7 * delta_x
        assert rz["strength"]["s_ref"] == pytest.approx(expected_z, abs=1e-6)

        # Same episode but 3 h later, and an unrelated memory: untouched.
        for mid in (late, control):
            assert (await get(c, mid))["strength"]["s_ref"] == 0.6

        # A redelivered event (same event id twice on the stream) applies once.
        later = at(days=20)
        event = MemoryRecalled(
            tenant=KEYS["life-spread"],
            query="bakery",
            now=later,
            items=[RecalledItem(memory_id=x, rank=0, relevance=0.8)],
        )
        before_x, before_z = await get(c, x), await get(c, z)
        await life.res.bus.publish(STREAM_RECALLED, event)
        await life.res.bus.publish(STREAM_RECALLED, event)
        await settle(c)
        s_now = strength_at(before_x, later)
        delta = 0.5 * (1 - s_now)
        after_x = await get(c, x)
        assert after_x["strength"]["s_ref"] == pytest.approx(s_now + delta, abs=1e-6)
        expected_z = strength_at(before_z, later) + 0.5 * 0.7 * delta
        assert (await get(c, z))["strength"]["s_ref"] == pytest.approx(expected_z, abs=1e-6)

        # The new strengths are held in Redis (the strength overlay) until the
        # strength_fold job writes them into the payloads; reads answer alike before and
        # after, and a second fold has nothing left to write.
        tenant = KEYS["life-spread"]
        shard = getattr(life.res.vectors, "inner", None)
        assert shard is not None
        assert (await shard.get(tenant, [x]))[0].payload["strength"]["s_ref"] == 0.6
        shown = {m: (await get(c, m))["strength"] for m in (x, y, z)}
        assert await job(c, "strength_fold", later) == 3
        for m, st in shown.items():
            assert (await get(c, m))["strength"] == st
            folded = (await shard.get(tenant, [m]))[0].payload["strength"]
            assert folded["s_ref"] == pytest.approx(st["s_ref"], abs=1e-12)
            assert {k: v for k, v in folded.items() if k != "s_ref"} == {
                k: v for k, v in st.items() if k != "s_ref"
            }
        assert await job(c, "strength_fold", later) == 0


async def list_all(c: AsyncPcmClient) -> list[dict[str, Any]]:
    return (await c.list_memories(limit=500)).items


async def episode_records(c: AsyncPcmClient) -> list[dict[str, Any]]:
    return [m for m in await list_all(c) if m["source"] == "consolidation"]


async def test_consolidation_builds_one_record_per_episode(life: Lifecycle) -> None:
    async with life.client("episode") as c:
        trip = [
            ("We landed in Lisbon and took the tram to the old town.", 0),
            ("Lunch was grilled sardines at a tiny place near the river.", 5),
            ("In the afternoon we climbed up to the castle for the view.", 10),
            ("We ended the day listening to fado in Alfama.", 15),
        ]
        # Stored out of order: the record must follow event time, not arrival.
        ids = {}
        for text, minute in reversed(trip):
            ids[minute] = await store(c, text, at(minutes=minute), episode="lisbon")
        await store(c, "Call the plumber about the leak.", T0, episode="chores")
        await store(c, "Buy washing powder.", at(minutes=3), episode="chores")
        await store(c, "Nina's birthday is on the 12th of March.", T0)
        await settle(c)

        day1 = at(days=1)
        assert await job(c, "consolidation", at(hours=2)) == 0  # episode not quiet yet
        assert await job(c, "consolidation", day1) == 1
        assert await job(c, "consolidation", day1) == 0  # idempotent
        (rec,) = await episode_records(c)
        assert rec["episode"] == "lisbon" and rec["state"] == "active"
        assert rec["metadata"]["sources"] == [ids[m] for _, m in trip]
        assert rec["text"].splitlines() == [
            f"[{at(minutes=m):%Y-%m-%d %H:%M}] {text}" for text, m in trip
        ]
        assert datetime.fromisoformat(rec["created_at"]) == T0  # the first source's date
        assert rec["graph"]["extracted"] is True and rec["surprisal"]["judged_at"]
        # Sources are kept as they were.
        for _, m in trip:
            assert (await get(c, ids[m]))["state"] == "active"
        # The record is a searchable memory (dense + sparse vectors written).
        got = await recall(c, "What did we eat for lunch in Lisbon?", day1)
        assert rec["id"] in got

        # The episode grows: after it settles again the same record is rewritten.
        extra = await store(
            c, "Back at the hotel we planned the Sintra day trip.", at(minutes=40), episode="lisbon"
        )
        await settle(c)
        assert await job(c, "consolidation", day1) == 1
        (grown,) = await episode_records(c)
        assert grown["id"] == rec["id"] and grown["version"] == rec["version"] + 1
        assert grown["metadata"]["sources"] == [*rec["metadata"]["sources"], extra]

        # Still being written: the existing record stays, unchanged, until it is quiet.
        day5 = at(days=5)
        await store(c, "Next morning: pastéis de nata for breakfast.", day5, episode="lisbon")
        await settle(c)
        assert await job(c, "consolidation", day5) == 0
        (kept,) = await episode_records(c)
        assert kept["version"] == grown["version"]

        # A source's text rewritten: the record quoting the old text goes at once, and the
        # next run rebuilds it (same id) with the new text.
        first = kept["metadata"]["sources"][0]
        new_text = "We landed in Lisbon at dawn and took the tram to the old town."
        await c.update(first, text=new_text)
        assert await episode_records(c) == []
        await settle(c)
        assert await job(c, "consolidation", day5 + timedelta(days=1)) == 1
        (rebuilt,) = await episode_records(c)
        assert rebuilt["id"] == kept["id"] and new_text in rebuilt["text"]

        # Sources explicitly deleted: the record goes with the first, and below the minimum
        # it is not rebuilt, so deleted text never survives inside it.
        for mid in rebuilt["metadata"]["sources"][:5]:
            await c.delete(mid)
            assert await episode_records(c) == []
        await settle(c)
        assert await job(c, "consolidation", day5 + timedelta(days=2)) == 0
        assert await episode_records(c) == []


async def test_repair_restores_vectors_and_downstream_work(life: Lifecycle) -> None:
    res = life.res
    tenant = KEYS["life-repair"]
    async with life.client("repair") as c:
        query = "Where does Kara keep her climbing gear?"
        zeroed = await store(c, "Kara keeps her climbing gear in the hallway closet.", T0)
        missing = await store(c, "Leo stores his kayak paddles in the garage loft.", T0)
        healthy = await store(c, "Mona waters the fern every Sunday evening.", T0)
        await settle(c)
        assert (await recall(c, query, at(days=1)))[:1] == [zeroed]

        # Damage: one vector zeroed (an upsert without an embedding), one removed outright.
        (p,) = await res.vectors.get(tenant, [zeroed])
        await res.vectors.upsert([VectorPoint(id=p.id, vector=[0.0] * 384, payload=p.payload)])
        await _remove_dense_vector(res, missing)
        assert zeroed not in await recall(c, query, at(days=1))

        assert await job(c, "repair", datetime.now(UTC)) == 2  # within grace: vectors only
        for mid in (zeroed, missing, healthy):
            (q,) = await res.vectors.get(tenant, [mid], with_vectors=True)
            assert q.vector is not None
            assert math.isclose(math.hypot(*q.vector), 1.0, rel_tol=1e-3)
        assert (await recall(c, query, at(days=1)))[:1] == [zeroed]
        assert await job(c, "repair", datetime.now(UTC)) == 0

        # Downstream work lost (extraction never recorded): the graph repair re-publishes
        # it after the grace period; lost judging is the generic repair's.
        await res.vectors.set_payload(tenant, healthy, {"graph": {"extracted": False}})
        later = datetime.now(UTC) + timedelta(hours=1)
        assert await job(c, "repair", later) == 0
        assert await job(c, "graph_repair", later) == 1
        assert await job(c, "graph_repair", later) == 0  # at most once per grace period
        await settle(c)
        rec = await get(c, healthy)
        assert rec["graph"]["extracted"] is True and "Mona" in rec["graph"]["entities"]
        await res.vectors.set_payload(tenant, healthy, {"surprisal": {}})
        assert await job(c, "repair", later) == 1
        assert await job(c, "repair", later) == 0
        await settle(c)
        assert (await get(c, healthy))["surprisal"]["judged_at"]


async def _remove_dense_vector(res: Resources, mid: str) -> None:
    """Qdrant allows a point without its named vector; the port has no call for that, so
    the test reaches the embedded shard (test-only)."""
    import qdrant_edge as qe

    from pcm_common.stores.qdrant.common import DENSE
    from pcm_common.stores.qdrant.edge.store import EdgeVectorStore

    store = res.vectors
    while hasattr(store, "inner"):  # past the strength overlay and the dual-write wrapper
        store = store.inner
    assert isinstance(store, EdgeVectorStore)
    op = qe.UpdateOperation.delete_vectors([mid], [DENSE])
    await store._run(lambda: store._write(lambda shard: shard.update(op), "test"))


async def test_jobs_are_single_runners_per_tenant_and_interval(life: Lifecycle) -> None:
    tenant = KEYS["life-locks"]
    redis = life.res.redis
    async with life.client("locks") as c:
        await store(c, "Olga feeds the neighbour's cat on Tuesdays.", T0)
        # Another replica holds this tenant's consolidation lock: the API says so.
        await redis.set(rkeys.job_lock("consolidation", tenant), "other-replica", ex=30)
        with pytest.raises(JobRunning):
            await c.consolidate()
        await redis.delete(rkeys.job_lock("consolidation", tenant))
        await c.consolidate()

        # The scheduler runs a tenant's job once per interval, whichever replica ticks.
        ran: list[str] = []

        async def spy(t: str, now: datetime) -> int:
            ran.append(t)
            return 0

        slot = rkeys.job_slot("repair", tenant)
        await redis.delete(slot)
        original = life.jobs.jobs["repair"]
        life.jobs.jobs["repair"] = spy
        try:
            await life.jobs.run_scheduled("repair")
            await life.jobs.run_scheduled("repair")  # a second replica's tick: slot taken
        finally:
            life.jobs.jobs["repair"] = original
        assert ran.count(tenant) == 1
        assert 0 < await redis.ttl(slot) <= life.jobs.intervals["repair"]
