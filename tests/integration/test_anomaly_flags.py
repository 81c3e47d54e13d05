"""Surprisal judging and anomaly flags on real stores.

- Judging + flags in process: a real Qdrant Edge shard in a temp dir, real MiniLM
  embeddings, the routine index in the tests' Redis (DB 13).
- End to end through the HTTP API (real Redis Streams, sweeper consumer group, recall):
  needs the wiring described in the surprisal hand-off (SweeperHandlers.on_written ->
  Judging.on_written, RecallService -> flags.compute).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pcm_cli.testing import settle
from pcm_client import AsyncPcmClient
from pcm_common.domain.memory import MemoryRecord, Strength, text_hash
from pcm_common.judge import Judge, Verdict
from pcm_common.messaging.events import MemoryWritten
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.resources import Resources
from pcm_common.stores.vectors import Filter, VectorPoint
from pcm_recall import flags
from pcm_sweeper.judging import Judging
from tests.conftest import TEST_REDIS

T0 = datetime(2024, 1, 1, 7, 0, tzinfo=UTC)
RUN_TEXTS = [
    "Went for a run on the river path this morning: {d} km in {t}.",
    "Morning run on the river path, {d} km, finished in {t}.",
    "Ran {d} km on the river path today, time {t}.",
]
CALL_TEXTS = [
    "Weekly call with Mom: {m} minutes.",
    "Called Mom this evening, we talked for {m} minutes.",
]


def runs(n: int, outlier_at: int | None = None) -> list[tuple[str, datetime]]:
    out = []
    for i in range(n):
        t = f"{30 + i % 3}:{10 + 7 * i % 40:02d}" if i != outlier_at else "1:04:12"
        out.append((RUN_TEXTS[i % 3].format(d=f"5.{i % 3}", t=t), T0 + timedelta(days=2 * i)))
    return out


def calls(n: int, start: datetime) -> list[tuple[str, datetime]]:
    return [
        (CALL_TEXTS[i % 2].format(m=40 + (i * 7) % 12), start + timedelta(days=7 * i))
        for i in range(n)
    ]


@pytest.fixture
async def res(tmp_path: Path) -> AsyncIterator[Resources]:
    settings = PcmSettings(redis_url=f"{TEST_REDIS}/13", qdrant_path=tmp_path / "q")
    r = Resources(settings)
    await r.vectors.ensure_collection()
    yield r
    await r.aclose()


async def store(res: Resources, tenant: str, items: Sequence[tuple[str, datetime]]) -> list[str]:
    vecs = await res.embedder.embed([t for t, _ in items])
    points, ids = [], []
    for (text, at), vec in zip(items, vecs, strict=True):
        rec = MemoryRecord(
            id=str(uuid.uuid4()),
            tenant=tenant,
            text=text,
            text_hash=text_hash(text),
            created_at=at,
            ingested_at=at,
            strength=Strength(t_ref=at),
        )
        points.append(VectorPoint(id=rec.id, vector=vec, payload=rec.to_payload()))
        ids.append(rec.id)
    await res.vectors.upsert(points)
    return ids


def written(tenant: str, mid: str, text: str, at: datetime) -> MemoryWritten:
    return MemoryWritten(tenant=tenant, memory_id=mid, text=text, created_at=at)


async def store_and_judge(
    res: Resources, tenant: str, *groups: Sequence[tuple[str, datetime]]
) -> list[list[str]]:
    """Store each group of memories, then judge them all, group by group, as the sweeper's
    consumer would; the stored ids per group."""
    ids = [await store(res, tenant, items) for items in groups]
    judging = Judging(res)
    for group_ids, items in zip(ids, groups, strict=True):
        for mid, item in zip(group_ids, items, strict=True):
            await judging.on_written(written(tenant, mid, *item))
    return ids


async def test_judging_stores_verdict_family_and_is_idempotent(res: Resources) -> None:
    items = runs(8, outlier_at=6)
    (ids,) = await store_and_judge(res, "t1", items)
    got = {p.id: p.payload["surprisal"] for p in await res.vectors.get("t1", ids)}
    assert got[ids[0]]["family_ids"] == [] and got[ids[0]]["score"] is None
    out = got[ids[6]]
    assert out["score"] >= 0.7 and "1:04:12" in out["differs"] and out["usual"]
    assert set(out["family_ids"]) <= set(ids[:6]) and len(out["family_ids"]) >= 4
    assert all(got[i]["score"] < 0.7 for i in ids[4:6] + ids[7:])
    # redelivery changes nothing
    await Judging(res).on_written(written("t1", ids[6], *items[6]))
    again = (await res.vectors.get("t1", [ids[6]]))[0].payload["surprisal"]
    assert again == out


class Failing(Judge):
    async def judge(self, memory: MemoryRecord, family: Sequence[MemoryRecord]) -> Verdict:
        raise TimeoutError("model did not answer")


async def test_failing_judge_leaves_memory_for_the_sweep(res: Resources) -> None:
    items = runs(7, outlier_at=6)
    ids = await store(res, "t2", items)
    failing = Judging(res, judge=Failing())
    await failing.on_written(written("t2", ids[6], *items[6]))  # must not raise
    assert (await res.vectors.get("t2", [ids[6]]))[0].payload["surprisal"]["judged_at"] is None
    missed = await res.vectors.count("t2", Filter(must={"surprisal.judged_at": None}))
    assert missed == 7

    class Settings:
        surprisal_sweep_grace_s = -1e9  # test memories are "ingested" in the past anyway

    judged = await Judging(res, Settings()).sweep("t2", T0 + timedelta(days=30))
    assert judged == 7
    assert (await res.vectors.get("t2", [ids[6]]))[0].payload["surprisal"]["score"] >= 0.7
    assert await Judging(res, Settings()).sweep("t2", T0 + timedelta(days=30)) == 0


async def test_flags_surprise_via_family_and_stopped_routine(res: Resources) -> None:
    run_items = runs(10, outlier_at=8)
    call_items = calls(8, T0 - timedelta(days=70))  # weekly until day -21, then silence
    run_ids, call_ids = await store_and_judge(res, "t3", run_items, call_items)
    now = T0 + timedelta(days=19)  # the runs go on (last one yesterday)
    vis = Filter(must={"state": ["active"]}, should=[{"scope": "global"}])

    async def recall(ranked: list[str]) -> list[flags.AnomalyFlag]:
        payloads = {p.id: p.payload for p in await res.vectors.get("t3", ranked)}
        return await flags.compute(res.vectors, res.routines, "t3", ranked, payloads, now, vis)

    # Only a normal run was recalled: its family reaches the outlier.
    got = await recall([run_ids[2]])
    assert [f.kind for f in got] == ["surprise"] and got[0].memory_id == run_ids[8]
    # The calls stopped 40 days ago after weekly entries: flagged with date and interval.
    got = await recall([call_ids[3]])
    (stop,) = [f for f in got if f.kind == "stopped_routine"]
    assert stop.memory_id == call_ids[-1]
    assert stop.usual_interval_days == pytest.approx(7.0, abs=0.1)
    assert stop.last_at == call_items[-1][1]
    # The runs continue up to `now`: never flagged as stopped.
    late = await recall([run_ids[9]])
    assert all(f.kind != "stopped_routine" for f in late)
    # ... and a routine asked about the day after its last entry is not stopped either.
    payloads = {p.id: p.payload for p in await res.vectors.get("t3", [call_ids[3]])}
    early = await flags.compute(
        res.vectors,
        res.routines,
        "t3",
        [call_ids[3]],
        payloads,
        call_items[-1][1] + timedelta(days=1),
        vis,
    )
    assert early == []


async def test_stopped_routine_reached_from_the_pool_and_confirmed(res: Resources) -> None:
    run_items = runs(12)
    call_items = calls(8, T0 - timedelta(days=70))  # weekly until day -21, then silence
    run_ids, call_ids = await store_and_judge(res, "t4", run_items, call_items)
    vis = Filter(must={"state": ["active"]}, should=[{"scope": "global"}])
    now = T0 + timedelta(days=23)

    async def compute(ranked: list[str], pool: list[str], at: datetime) -> list[flags.AnomalyFlag]:
        payloads = {p.id: p.payload for p in await res.vectors.get("t4", ranked + pool)}
        return await flags.compute(
            res.vectors, res.routines, "t4", ranked, payloads, at, vis, pool_ids=pool
        )

    # Nothing recalled; the calls come only after a dozen other candidates under the floor.
    got = await compute([], [*run_ids, call_ids[2]], now)
    (stop,) = [f for f in got if f.kind == "stopped_routine"]
    assert stop.memory_id == call_ids[-1] and stop.last_at == call_items[-1][1]
    assert len(got) <= flags.MAX_FLAGS

    # Seen from the sixth call, five days after the last one: the routine index holds the
    # later calls too, so the routine is not taken for stopped.
    early = await compute([call_ids[5]], [], call_items[-1][1] + timedelta(days=5))
    assert all(f.kind != "stopped_routine" for f in early)


# ---- end to end through the HTTP API (needs the proposed wiring) -----------------------


async def test_http_flags_end_to_end(pcm_a: AsyncPcmClient) -> None:
    items = [*runs(10, outlier_at=8), *calls(8, T0 - timedelta(days=70))]
    for text, at in items:
        r = await pcm_a.store(text, created_at=at)
        assert r.status == "created", r
    await settle(pcm_a)
    now = T0 + timedelta(days=19)
    out = await pcm_a.recall("How was my last run?", now=now)
    kinds = {f.kind for f in out.anomaly_flags}
    assert "surprise" in kinds
    surprise = next(f for f in out.anomaly_flags if f.kind == "surprise")
    assert "1:04:12" in surprise.text and surprise.usual
    assert "[ANOMALY FLAGS — PAY ATTENTION]" in out.prompt and "1:04:12" in out.prompt
    out = await pcm_a.recall("What did Mom and I talk about on the phone?", now=now)
    flagged = [f for f in out.anomaly_flags if f.kind == "stopped_routine"]
    assert flagged and flagged[0].usual_interval_days == pytest.approx(7.0, abs=0.1)


async def test_sweep_judges_verdicts_of_the_older_grouping_again(res: Resources) -> None:
    """A verdict stored before families kept to one owner (no `grouping`) may name another
    user's memories: the sweep judges it again, within its own user, once."""
    bob = [
        (f"Phone plan bill from Kestrel: £{20 + i}.40.", T0 + timedelta(days=30 * i))
        for i in range(6)
    ]
    bob_ids = await store(res, "t-legacy", bob)
    await res.vectors.set_payload_many("t-legacy", [(m, {"user_id": "bob"}) for m in bob_ids])
    (mine,) = await store(
        res, "t-legacy", [("Phone plan bill from Kestrel: £96.40.", T0 + timedelta(days=200))]
    )
    legacy = {
        "surprisal": {
            "score": 0.95,
            "differs": "96.40",
            "usual": "usually 22.40",
            "family_ids": bob_ids,
            "judged_at": T0.isoformat(),
        },
        "user_id": "alice",
    }
    await res.vectors.set_payload_many("t-legacy", [(mine, legacy)])

    class Settings:
        surprisal_sweep_grace_s = -1e9

    judging = Judging(res, Settings())
    assert await judging.sweep("t-legacy", T0 + timedelta(days=201)) >= 1
    got = (await res.vectors.get("t-legacy", [mine]))[0].payload["surprisal"]
    assert got["grouping"] == 1 and got["family_ids"] == [] and got["usual"] == ""
    assert got["score"] is None  # alone in its group: nothing to compare with
    # Every verdict is of the current rule now: the next sweep has nothing to do.
    assert await judging.sweep("t-legacy", T0 + timedelta(days=201)) == 0


async def test_llm_judge_prompt_holds_only_the_same_users_family(res: Resources) -> None:
    """The model judge (litellm's mock response: no model is called) is shown the memory's
    own user's earlier entries, never another user's of the same tenant."""
    from pcm_common.judge.llm import LlmJudge, build_messages

    class Recording(LlmJudge):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.prompts: list[str] = []

        async def judge(self, memory: MemoryRecord, family: Sequence[MemoryRecord]) -> Verdict:
            self.prompts.append(" ".join(m["content"] for m in build_messages(memory, family)))
            return await super().judge(memory, family)

    reply = '{"score": 0.1, "differs": "", "usual": "as usual", "updates": null}'
    bill = "Kestrel Telecom took £{} for the phone plan this month."
    bob = [(bill.format(f"2{i}.40"), T0 + timedelta(days=30 * i)) for i in range(6)]
    alice = [(bill.format(f"9{i}.15"), T0 + timedelta(days=30 * i + 3)) for i in range(6)]
    bob_ids = await store(res, "t-llm", bob)
    alice_ids = await store(res, "t-llm", alice)
    await res.vectors.set_payload_many(
        "t-llm",
        [(m, {"user_id": "bob"}) for m in bob_ids] + [(m, {"user_id": "alice"}) for m in alice_ids],
    )
    judge = Recording("openai/gpt-4o-mini", mock_response=reply)
    judging = Judging(res, judge=judge)
    events = sorted(zip(bob_ids + alice_ids, bob + alice, strict=True), key=lambda x: x[1][1])
    for mid, (text, at) in events:
        await judging.on_written(written("t-llm", mid, text, at))
    assert judge.prompts  # the later entries of each user had a family to judge against
    for prompt in judge.prompts:
        bobs = any(f"2{i}.40" in prompt for i in range(6))
        alices = any(f"9{i}.15" in prompt for i in range(6))
        assert bobs != alices, prompt  # one user's amounts per prompt, never both
    last = (await res.vectors.get("t-llm", [alice_ids[-1]]))[0].payload["surprisal"]
    assert set(last["family_ids"]) <= set(alice_ids) and last["usual"] == "as usual"
