"""The routine index on a real Redis: placement, merges, repeats, deletes, concurrency."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from pcm_cli.testing import settle
from pcm_client import AsyncPcmClient
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.routines import RoutineIndex
from tests.conftest import KEYS, TEST_REDIS, TEST_REDIS_URL

DAY = 86400.0
LATER = 4e9  # a `now` after every entry used here (epoch seconds, year 2096)


@pytest.fixture
async def index() -> AsyncIterator[RoutineIndex]:
    redis = Redis.from_url(f"{TEST_REDIS}/13")
    yield RoutineIndex(redis)
    await redis.aclose()


def tenant() -> str:
    return f"routines-{uuid.uuid4().hex[:8]}"


async def test_a_series_becomes_one_routine_with_every_entry(index: RoutineIndex) -> None:
    t = tenant()
    times = {f"e{i}": [i * 7 * DAY] for i in range(6)}
    for i in range(6):
        fam = {f"e{j}": times[f"e{j}"] for j in range(i)}
        await index.record(t, f"e{i}", times[f"e{i}"], fam)
    (routine,) = await index.routines(t, ["e5", "e0"], LATER)
    assert routine.seed == "e5"
    assert [m for m, _ in routine.entries] == [f"e{i}" for i in range(6)]
    # Judging a memory again changes nothing.
    await index.record(t, "e3", times["e3"], {f"e{j}": times[f"e{j}"] for j in range(3)})
    (again,) = await index.routines(t, ["e0"], LATER)
    assert again.entries == routine.entries


async def test_two_ends_of_a_routine_merge_and_strangers_stay_apart(index: RoutineIndex) -> None:
    t = tenant()
    await index.record(t, "a2", [2.0], {"a1": [1.0]})
    await index.record(t, "b2", [12.0], {"b1": [11.0]})
    await index.record(t, "x2", [50.0], {"x1": [40.0]})
    # A memory whose family is half one routine, half the other: they were one.
    await index.record(t, "m", [20.0], {"a1": [1.0], "a2": [2.0], "b1": [11.0], "b2": [12.0]})
    found = await index.routines(t, ["a1", "b1", "x1"], LATER)
    assert len(found) == 2
    merged = found[0]
    assert {m for m, _ in merged.entries} == {"a1", "a2", "b1", "b2", "m"}
    assert [m for m, _ in found[1].entries] == ["x1", "x2"]


async def test_repeats_join_and_deleted_memories_leave(index: RoutineIndex) -> None:
    t = tenant()
    await index.record(t, "e1", [1.0], {"e0": [0.0]})
    assert await index.add_times(t, "e1", [5.0, 9.0])
    assert not await index.add_times(t, "nobody", [3.0])
    (r,) = await index.routines(t, ["e0"], LATER)
    assert [ts for _, ts in r.entries] == [0.0, 1.0, 5.0, 9.0]
    # Seen from before the repeats: they count as later entries.
    (r,) = await index.routines(t, ["e0"], 4.0)
    assert [ts for _, ts in r.entries] == [0.0, 1.0] and r.later == 2
    await index.forget(t, "e1")
    (r,) = await index.routines(t, ["e0"], LATER)
    assert r.entries == [("e0", 0.0)]
    assert await index.routines(t, ["e1"], LATER) == []


async def test_concurrent_writers_lose_nothing(index: RoutineIndex) -> None:
    """Three writers with their own connections and locks (as three sweeper replicas)."""
    t = tenant()
    await index.record(t, "s1", [1.0], {"s0": [0.0]})
    others = [Redis.from_url(f"{TEST_REDIS}/13") for _ in range(2)]
    writers = [index, *(RoutineIndex(r) for r in others)]

    async def write(i: int) -> None:
        await writers[i % 3].record(t, f"m{i}", [10.0 + i], {"s0": [0.0], "s1": [1.0]})

    try:
        await asyncio.gather(*(write(i) for i in range(30)))
    finally:
        for r in others:
            await r.aclose()
    (r,) = await index.routines(t, ["s0"], LATER)
    assert len(r.entries) == 32
    assert await index.size(t) == 32


async def test_memberships_read_ahead_give_the_same_routines(index: RoutineIndex) -> None:
    """Recall reads its candidates' memberships while it scores them (`routine_of`); the
    routines it then gets are those of a plain lookup, whatever the read-ahead covered."""
    t = tenant()
    await index.record(t, "a2", [2.0], {"a1": [1.0]})
    await index.record(t, "b2", [12.0], {"b1": [11.0]})
    asked = ["n1", "b2", "a1", "b1", "a2"]
    ahead = await index.routine_of(t, ["a1", "a2", "b1", "b2", "n1", "zz"])
    assert ahead["n1"] is None and ahead["zz"] is None and ahead["a1"] == ahead["a2"]
    plain = await index.routines(t, asked, LATER)
    assert [r.seed for r in plain] == ["b2", "a1"]
    assert await index.routines(t, asked, LATER, known=ahead) == plain
    # Partly covered (an episode record ranked in later): the rest is asked.
    part = {k: v for k, v in ahead.items() if k in ("n1", "b1")}
    assert await index.routines(t, asked, LATER, known=part) == plain
    assert await index.routine_of(t, []) == {}


async def test_a_batch_places_as_one_by_one_does(index: RoutineIndex) -> None:
    """`record_many` applies its items in order, each seeing the ones before it: a series,
    a routine started and later merged in the same batch, a stranger, a memory judged
    again. Same routines as recording them one at a time."""
    times = {m: [float(i)] for i, m in enumerate("a1 a2 a3 b1 b2 b3 m x1 x2".split())}

    def item(m: str, fam: str) -> tuple[str, list[float], dict[str, list[float]]]:
        return m, times[m], {f: times[f] for f in fam.split()}

    stored = [item("a2", "a1"), item("b2", "b1")]  # routines before the batch
    batch = [
        item("a3", "a1 a2"),
        item("b3", "b1 b2"),
        item("m", "a1 a2 a3 b1 b2 b3"),  # both routines pass: merged into one
        item("x2", "x1"),
        item("a3", "a1 a2"),  # judged again
        item("x1", ""),
    ]
    one, many = tenant(), tenant()
    for m, ts, fam in [*stored, *batch]:
        await index.record(one, m, ts, fam)
    for m, ts, fam in stored:
        await index.record(many, m, ts, fam)
    placed = await index.record_many(many, batch)
    assert placed[-1] is not None and placed[3] == placed[-1]
    ids = list(times)
    assert await index.routines(many, ids, LATER) == await index.routines(one, ids, LATER)
    assert await index.size(many) == await index.size(one) == len(times)
    assert await index.record_many(many, []) == []


async def test_tenants_do_not_share_routines(index: RoutineIndex) -> None:
    a, b = tenant(), tenant()
    await index.record(a, "e1", [1.0], {"e0": [0.0]})
    assert await index.routines(b, ["e0", "e1"], LATER) == []


async def test_repeats_and_deletes_through_the_api_reach_the_routine(
    pcm_a: AsyncPcmClient,
) -> None:
    """Weekly calls through the API (pcm-client): judging places them in one routine; an
    exact repeat merged at ingest adds an entry; deleting a memory removes its entries; the
    `routines` job rebuilds a lost index."""
    start = datetime(2024, 3, 4, 19, 0, tzinfo=UTC)
    texts = [
        "Weekly call with Mom: 41 minutes.",
        "Called Mom this evening, we talked for 48 minutes.",
        "Weekly call with Mom: 43 minutes.",
        "Called Mom this evening, we talked for 50 minutes.",
        "Weekly call with Mom: 45 minutes.",
        "Called Mom this evening, we talked for 52 minutes.",
    ]
    # Its own user: a routine is one user's, and other tests of this session's tenant
    # write similar calls.
    user = f"routine-user-{uuid.uuid4().hex[:6]}"
    ids = []
    for i, text in enumerate(texts):
        r = await pcm_a.store(text, created_at=start + timedelta(days=7 * i), user_id=user)
        assert r.status == "created" and r.id, r
        ids.append(r.id)
    await settle(pcm_a)
    redis = Redis.from_url(TEST_REDIS_URL)
    index = RoutineIndex(redis)
    tenant = KEYS["key-a"]
    try:
        (routine,) = await index.routines(tenant, ids[-1:], LATER)
        assert {m for m, _ in routine.entries} == set(ids)
        before = len(routine.entries)

        again = start + timedelta(days=42)
        r = await pcm_a.store(texts[-1], created_at=again, user_id=user)
        assert r.status == "reinforced" and r.id == ids[-1], r
        await settle(pcm_a)
        (routine,) = await index.routines(tenant, ids[-1:], LATER)
        assert len(routine.entries) == before + 1
        assert routine.entries[-1][0] == ids[-1]

        await pcm_a.delete(ids[0])
        await settle(pcm_a)
        (routine,) = await index.routines(tenant, ids[-1:], LATER)
        assert ids[0] not in {m for m, _ in routine.entries}

        # Redis lost the index: the job puts every judged memory back.
        keys = [k async for k in redis.scan_iter(rkeys.routine_of(tenant)[: -len("of")] + "*")]
        await redis.delete(*keys)
        await pcm_a.run_job("routines")
        (routine,) = await index.routines(tenant, ids[-1:], LATER)
        assert {m for m, _ in routine.entries} == set(ids[1:])
    finally:
        await redis.aclose()


async def test_listed_gives_the_tenants_routines_only(index: RoutineIndex) -> None:
    t = tenant()
    # Tenants whose names extend this one's key prefix, or read as a SCAN pattern.
    names = [t, f"{t}:r:x", f"{t}*", f"{t}?"]
    for k, name in enumerate(names):
        times = {f"n{k}-e{i}": [i * 7 * DAY] for i in range(4)}  # ids as uuids: no colon
        for i, (mid, at) in enumerate(times.items()):
            await index.record(name, mid, at, dict(list(times.items())[:i]))
    (mine,) = await index.listed(t, 2 * 7 * DAY)
    assert [m for m, _ in mine.entries] == ["n0-e0", "n0-e1", "n0-e2"]
    assert mine.seed == "n0-e2" and mine.later == 1  # entries after `now` are counted
    for k, name in enumerate(names[1:], start=1):
        (theirs,) = await index.listed(name, LATER)
        assert {m.split("-")[0] for m, _ in theirs.entries} == {f"n{k}"}
    assert await index.listed(tenant(), LATER) == []
