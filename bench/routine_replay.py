"""The routines replay as a live deployment sees it (../shared/data/README.md).

Memories and questions in time order: every memory is stored before a question asked after
it and none before a question that precedes it; the background judging of what was stored
finishes before each question, which is recalled with `now = asked_at`. Two protocols:

- ``tenants``: each persona its own tenant (one API key each);
- ``users``: all personas as users (`user_id`) of one tenant, their writes interleaved in
  time order; each question is asked as its persona's user.

Only text and created_at (and the user in the second protocol) reach the service; the labels
stay here for scoring (`bench.outliers.score`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import argparse

    from bench.outliers import Replay

PROTOCOLS = ("tenants", "users")
SHARED_TENANT = "outliers-shared"


def ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Step:
    """One event of the replay: a memory to store or a question to ask."""

    at: datetime
    persona: str
    memory: dict[str, Any] | None = None
    question: dict[str, Any] | None = None


def timeline(data: dict[str, Any]) -> list[Step]:
    """Every memory and question of every persona in time order; a memory written at the
    very instant a question is asked comes first (it was there to be recalled)."""
    steps = [Step(ts(m["created_at"]), m["persona"], memory=m) for m in data["memories"]]
    steps += [Step(ts(q["asked_at"]), q["persona"], question=q) for q in data["questions"]]
    steps.sort(key=lambda s: (s.at, s.question is not None))
    return steps


def tenant_of(protocol: str, persona: str) -> str:
    return SHARED_TENANT if protocol == "users" else f"outliers-{persona}"


def user_of(protocol: str, persona: str) -> str | None:
    return persona if protocol == "users" else None


def segments(steps: list[Step]) -> Iterator[tuple[list[Step], Step | None]]:
    """The memories stored before each question, then the question (None after the last)."""
    pending: list[Step] = []
    for s in steps:
        if s.question is None:
            pending.append(s)
        else:
            yield pending, s
            pending = []
    if pending:
        yield pending, None


def answer(out: Any) -> dict[str, Any]:
    """What scoring reads of a recall answer (a `RecallOut` or its JSON)."""
    if not isinstance(out, dict):
        out = out.model_dump(mode="json")
    return {
        "anomaly_flags": out["anomaly_flags"],
        "situational_context": [{"memory_id": c["memory_id"]} for c in out["situational_context"]],
        "episode_context": [{"memory_id": c["memory_id"]} for c in out["episode_context"]],
    }


# ---- offline: the real services in this process ---------------------------------------


async def run_offline(
    data: dict[str, Any], judge: str, k: int, protocol: str, redis_url: str
) -> dict[str, Replay]:
    """The live replay through the real ingest, judging and recall services, in process:
    a Qdrant Edge shard in a temp dir, events and the routine index in `redis_url`."""
    from redis.asyncio import Redis

    from bench.outliers import Replay
    from pcm_common.messaging.events import MemoryChanged
    from pcm_common.runtime.config import PcmSettings
    from pcm_common.runtime.resources import Resources
    from pcm_common.runtime.telemetry import configure_logging
    from pcm_ingest.schemas import MemoryIn
    from pcm_ingest.service import IngestService
    from pcm_ingest.settings import IngestSettings
    from pcm_recall.schemas import RecallIn
    from pcm_recall.service import RecallService
    from pcm_recall.settings import RecallSettings
    from pcm_sweeper.judging import Judging
    from pcm_sweeper.routine_changes import RoutineChanges
    from pcm_sweeper.settings import SweeperSettings

    configure_logging("WARNING", json=False)  # a line per memory would bury the report
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    await redis.aclose()
    tmp = Path(tempfile.mkdtemp(prefix="pcm-routines-"))
    res = Resources(PcmSettings(redis_url=redis_url, qdrant_path=tmp / "qdrant"))
    ingest = IngestService(res, IngestSettings(redis_url=redis_url))
    judging = Judging(
        res,
        SweeperSettings(redis_url=redis_url, surprisal_judge=judge, surprisal_sweep_grace_s=-1e9),
    )
    recall = RecallService(res, RecallSettings())
    # The sweeper's consumer of repeats: an exact or near copy merged at ingest is one more
    # entry of its routine (the pipeline's `pcm.memory.changed`, which nothing reads here).
    repeats = RoutineChanges(res)
    replays: dict[str, Replay] = defaultdict(Replay)
    try:
        await res.vectors.ensure_collection()
        for stored, asked in segments(timeline(data)):
            touched: set[str] = set()
            for s in stored:
                assert s.memory is not None
                m = s.memory
                tenant = tenant_of(protocol, s.persona)
                item = MemoryIn(
                    text=m["text"], created_at=s.at, user_id=user_of(protocol, s.persona)
                )
                (r,) = await ingest.store(tenant, [item])
                assert r.id is not None  # explicit stores are never skipped
                replays[s.persona].ids[m["memory_id"]] = r.id
                replays[s.persona].status[m["memory_id"]] = r.status
                touched.add(tenant)
                if r.status != "created":
                    await repeats.on_changed(
                        MemoryChanged(tenant=tenant, memory_id=r.id, change="repeated")
                    )
            for tenant in sorted(touched):  # the background judging, finished
                await judging.sweep(tenant, stored[-1].at)
            if asked is None:
                break
            assert asked.question is not None
            q = asked.question
            req = RecallIn(
                query=q["text"], now=asked.at, k=k, user_id=user_of(protocol, asked.persona)
            )
            out, _ = await recall.recall(tenant_of(protocol, asked.persona), req)
            rep = replays[asked.persona]
            rep.flag_ms.append(float(out.timings_ms.get("flags", 0.0)))
            rep.answers[q["question_id"]] = answer(out)
        for tenant in {tenant_of(protocol, p) for p in replays}:
            await _collect_judged(res, tenant, replays)
    finally:
        await res.aclose()
        shutil.rmtree(tmp, ignore_errors=True)
    return replays


async def _collect_judged(res: Any, tenant: str, replays: dict[str, Replay]) -> None:
    """Each persona's judged memories and their scores, read back from the store."""
    owner = {sid: p for p, rep in replays.items() for sid in rep.ids.values()}
    offset: str | None = None
    while True:
        points, offset = await res.vectors.scroll(tenant, limit=1024, offset=offset)
        for p in points:
            s = p.payload.get("surprisal") or {}
            persona = owner.get(p.id)
            if persona is not None:
                replays[persona].payloads[p.id] = p.payload
                if s.get("judged_at"):
                    replays[persona].judged[p.id] = s.get("score")
        if offset is None:
            return


# ---- HTTP: a real all-in-one server ------------------------------------------------------


async def run_http(
    data: dict[str, Any],
    args: argparse.Namespace,
    protocol: str,
    variant_env: dict[str, str] | None = None,
) -> dict[str, Replay]:
    """The live replay against a real server: one write per memory, the pipeline settled
    before each question."""
    from bench.common import as_json, base_env, client, pcm_server, settle
    from bench.outliers import Replay

    personas = sorted({m["persona"] for m in data["memories"]})
    key_of = {p: ("key-shared" if protocol == "users" else f"key-{p}") for p in personas}
    keys = {key_of[p]: tenant_of(protocol, p) for p in personas}
    env = {**base_env(args), **(variant_env or {}), "PCM_SURPRISAL_JUDGE": args.judge}
    replays: dict[str, Replay] = defaultdict(Replay)
    async with pcm_server(env, keys, inline=args.inline_server) as url:
        clients = {k: client(url, k) for k in keys}
        try:
            for stored, asked in segments(timeline(data)):
                for s in stored:
                    assert s.memory is not None
                    m = s.memory
                    r = await clients[key_of[s.persona]].store(
                        m["text"],
                        created_at=m["created_at"],
                        user_id=user_of(protocol, s.persona),
                    )
                    replays[s.persona].ids[m["memory_id"]] = cast(
                        str, r.id
                    )  # no scope declines here
                    replays[s.persona].status[m["memory_id"]] = r.status
                if asked is None:
                    break
                assert asked.question is not None
                q, c = asked.question, clients[key_of[asked.persona]]
                await settle(c)
                t0 = time.perf_counter()
                out = as_json(
                    await c.recall(
                        q["text"],
                        now=q["asked_at"],
                        k=args.k,
                        user_id=user_of(protocol, asked.persona),
                    )
                )
                ms = out.get("timings_ms", {}).get("flags")
                rep = replays[asked.persona]
                rep.flag_ms.append(
                    float(ms) if ms is not None else (time.perf_counter() - t0) * 1e3
                )
                rep.answers[q["question_id"]] = answer(out)
            for p in personas:
                c = clients[key_of[p]]
                await settle(c)
                for sid in set(replays[p].ids.values()):
                    judged = ((await c.get(sid)).model_extra or {}).get("surprisal") or {}
                    if judged.get("judged_at"):
                        replays[p].judged[sid] = judged.get("score")
        finally:
            for c in clients.values():
                await c.aclose()
    return replays


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
