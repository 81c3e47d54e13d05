"""Redis restarted while clients write and recall through the all-in-one server: every
answer is a success or a JSON 503 with Retry-After (never another 5xx, never a hang), and
every acknowledged write is recalled afterwards."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
import pytest

from pcm_cli.testing import ServerProcess
from tests.faults.conftest import AUTH, PrivateGraph, distinct_text, drained, fault_env, stored_ids
from tests.redis_server import PrivateRedis

pytestmark = pytest.mark.faults

WRITERS = 3
# No answer may take longer than this: a request waiting on a Redis that is away is a hang.
ANSWER_WITHIN_S = 15.0


class Log:
    def __init__(self) -> None:
        self.acked: dict[str, str] = {}
        self.unavailable = 0
        self.held = 0
        self.slowest_s = 0.0
        self.stop = asyncio.Event()

    def check(self, r: httpx.Response, took_s: float) -> bool:
        """True for a success; a 503 must be the documented one; anything else fails."""
        self.slowest_s = max(self.slowest_s, took_s)
        if r.status_code == 503:
            assert r.json()["error"] == "unavailable", r.text
            assert int(r.headers["Retry-After"]) > 0
            self.unavailable += 1
            return False
        if r.status_code == 409:
            # A retry of a write whose first try met the restart (answered 503): its key
            # is held until the first try's lease ends, and the answer says when.
            assert r.json()["error"] == "idempotency_key_in_progress", r.text
            assert int(r.headers["Retry-After"]) > 0
            self.held += 1
            return False
        assert r.status_code in (200, 201), (r.status_code, r.text)
        return True


async def _timed(c: httpx.AsyncClient, path: str, body: dict[str, object], **kw: object):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    r = await c.post(path, json=body, timeout=ANSWER_WITHIN_S, **kw)  # type: ignore[arg-type]
    return r, time.monotonic() - started


async def _writer(c: httpx.AsyncClient, k: int, log: Log) -> None:
    n = 0
    while not log.stop.is_set():
        n += 1
        text = distinct_text(k * 10_000 + n)
        key = {"Idempotency-Key": uuid.uuid4().hex}
        while not log.stop.is_set():  # the same write retried after a 503
            r, took = await _timed(c, "/v1/memories", {"text": text}, headers=key)
            if log.check(r, took):
                acked = r.json()
                assert acked["status"] == "created", acked
                log.acked[acked["id"]] = text
                break
            await asyncio.sleep(min(1.0, float(r.headers["Retry-After"])))


async def _reader(c: httpx.AsyncClient, log: Log) -> None:
    n = 0
    while not log.stop.is_set():
        n += 1
        r, took = await _timed(c, "/v1/recall", {"query": distinct_text(n)})
        log.check(r, took)
        await asyncio.sleep(0.05)


async def test_redis_restart_during_writes(
    tmp_path: Path, redis: PrivateRedis, graph: PrivateGraph
) -> None:
    # A retry waits out the lease of the first try the restart cut short: 5 s, not 30.
    env = fault_env(tmp_path, redis.url, graph.uri, PCM_IDEMPOTENCY_LEASE_S="5")
    server = ServerProcess(env, output=tmp_path / "pcm.log")
    url = await server.start()
    log = Log()
    try:
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as c:
            tasks = [asyncio.create_task(_writer(c, k, log)) for k in range(WRITERS)]
            tasks.append(asyncio.create_task(_reader(c, log)))
            while len(log.acked) < 20:
                await asyncio.sleep(0.1)
                for t in tasks:
                    if t.done():
                        t.result()
            before = len(log.acked)
            await redis.restart(down_s=3.0)
            # Writes go on after the restart.
            while len(log.acked) < before + 20:
                await asyncio.sleep(0.1)
                for t in tasks:
                    if t.done():
                        t.result()
            log.stop.set()
            await asyncio.gather(*tasks)
            assert log.unavailable > 0, "no request met the restart: nothing was tested"
            assert log.slowest_s < ANSWER_WITHIN_S

            missing = set(log.acked) - await stored_ids(c)
            assert not missing, f"{len(missing)} acknowledged writes lost"
            for memory_id, text in log.acked.items():
                r = await c.post("/v1/recall", json={"query": text, "k": 10})
                assert r.status_code == 200, r.text
                ids = [i["memory_id"] for i in r.json()["situational_context"]]
                assert memory_id in ids, f"{memory_id} not recalled by its own text"
            await drained(c, within_s=90)
        print(
            f"{len(log.acked)} writes acknowledged, {log.unavailable} answers 503, "
            f"{log.held} retries 409, "
            f"slowest answer {log.slowest_s:.2f} s"
        )
    finally:
        await server.stop()
