"""The write firewall on a real server in its own process (`pcm dev`, real Redis, Qdrant
Edge on disk, the graph server): a blocked secret leaves no trace in any store, stream,
log or Redis AOF; texts of the shapes that once froze the server are answered fast while
another tenant's recalls keep their pace."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import re2
from redis.asyncio import Redis

from pcm_cli.testing import server_process, settle
from pcm_ingest.firewall import WriteFirewall
from tests.conftest import TEST_REDIS, service_env
from tests.unit.firewall_corpus import INVISIBLE, PII, SECRETS, chunked, split

pytestmark = pytest.mark.slow
REDIS_URL = f"{TEST_REDIS}/14"
_ALONE = WriteFirewall()  # which secrets are known by their shape alone (a name has no context)


@dataclass(frozen=True)
class Server:
    url: str
    log: Path
    qdrant: Path


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Server]:
    tmp = tmp_path_factory.mktemp("firewall")
    env = {**service_env(tmp, REDIS_URL), "PCM_LOG_LEVEL": "INFO"}
    log = tmp / "server.log"
    async with server_process(env, output=log) as url:
        yield Server(url, log, tmp / "qdrant")


def _client(server: Server, key: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    )


# --- nothing of a blocked secret is kept ------------------------------------------------

_FRAGMENT = 12  # characters: any kept piece of a secret this long or longer is found
_STRIDE = 4


def _fragments(value: str) -> set[str]:
    if len(value) <= _FRAGMENT:
        return {value}
    last = len(value) - _FRAGMENT
    return {value[i : i + _FRAGMENT] for i in [*range(0, last, _STRIDE), last]}


def _finder(values: list[str]) -> re2._Regexp:
    """One RE2 automaton for every fragment of every value (megabytes of stores scanned
    once, not once a fragment)."""
    frags = {f for v in values for f in _fragments(v) if "\n" not in f}
    return re2.compile(b"|".join(re2.escape(f.encode()) for f in sorted(frags)))


async def _redis_dump(redis: Redis) -> bytes:
    """Every key and value of the test database, streams entry by entry."""
    out: list[bytes] = []
    async for key in redis.scan_iter(count=500):
        kind = (await redis.type(key)).decode()
        out.append(key)
        if kind == "string":
            out.append(await redis.get(key) or b"")
        elif kind == "hash":
            out += [b for kv in (await redis.hgetall(key)).items() for b in kv]
        elif kind == "list":
            out += await redis.lrange(key, 0, -1)
        elif kind == "set":
            out += list(await redis.smembers(key))
        elif kind == "zset":
            out += await redis.zrange(key, 0, -1)
        elif kind == "stream":
            for _, fields in await redis.xrange(key):
                out += [b for kv in fields.items() for b in kv]
    return b"\n".join(out)


async def _aof_sizes(redis: Redis) -> dict[Path, int]:
    """The Redis append-only files and their sizes, where this machine can read them (a
    local Redis)."""
    folder = Path((await redis.config_get("dir"))["dir"])
    folder /= (await redis.config_get("appenddirname")).get("appenddirname", "")
    return _sizes(folder)


def _sizes(folder: Path) -> dict[Path, int]:
    files = [p for p in folder.glob("*") if p.is_file()] if folder.exists() else []
    return {p: p.stat().st_size for p in files if os.access(p, os.R_OK)}


def _appended(path: Path, before: dict[Path, int]) -> bytes:
    """What was written to an AOF file since `before` (all of it if it is new or was
    rewritten): the file keeps earlier runs' and other tests' writes."""
    data = path.read_bytes()
    start = before.get(path, 0)
    return data[start:] if len(data) >= start else data


def _files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def _blocked_writes(tag: str) -> list[tuple[str, dict[str, object]]]:
    """(method path, body) of writes that each carry one secret of the corpus, on every
    write path: text, batch, metadata, names, and the secret hidden by invisible
    characters or written in groups."""
    writes: list[tuple[str, dict[str, object]]] = []
    marks = list(INVISIBLE.values())
    for n, item in enumerate(SECRETS):
        plain = {"text": f"{tag} note {n}"}
        hidden = item.text.replace(item.value, split(item.value, marks[n % 3]))
        writes += [
            ("POST /v1/memories", {"text": item.text}),
            ("POST /v1/memories:batch", {"memories": [plain, {"text": item.text}]}),
            ("POST /v1/memories", {**plain, "metadata": {"a": {"b": [1, item.text]}}}),
            ("POST /v1/memories", {"text": hidden}),
            ("PATCH", {"text": item.text}),
            ("PATCH", {"metadata": {"notes": [item.text]}}),
        ]
        if item.chunked:
            grouped = item.text.replace(item.value, chunked(item.value))
            writes.append(("POST /v1/memories", {"text": grouped}))
        if "\n" not in item.value and _ALONE.screen(item.value).blocked:
            writes.append(("POST /v1/memories", {**plain, "user_id": item.value[:200]}))
    return writes


async def test_a_blocked_secret_leaves_no_trace(server: Server) -> None:
    tag = uuid.uuid4().hex[:8]
    canary = f"canary{tag}marker"
    redis = Redis.from_url(REDIS_URL)
    aof_before = await _aof_sizes(redis)
    async with _client(server, "key-a") as c:
        r = await c.post("/v1/memories", json={"text": f"Ann keeps the {canary} in the attic."})
        assert r.status_code == 201, r.text
        target = r.json()["id"]
        for route, body in _blocked_writes(tag):
            if route == "PATCH":
                r = await c.patch(f"/v1/memories/{target}", json=body)
            else:
                r = await c.post(route.split()[1], json=body)
            assert r.status_code == 422, (route, body, r.text)
            assert r.json()["error"] == "secret_detected"
            assert _finder([i.value for i in SECRETS]).search(r.content) is None
        await settle(c)

    try:
        stores = {"redis": await _redis_dump(redis)}
        for path in await _aof_sizes(redis):
            stores[str(path)] = _appended(path, aof_before)
        for path in [*_files_under(server.qdrant), server.log]:
            stores[str(path)] = path.read_bytes()
    finally:
        await redis.aclose()
    secrets = _finder([i.value for i in SECRETS])
    leaks = {name: m.group() for name, data in stores.items() if (m := secrets.search(data))}
    assert not leaks, leaks
    # The scan sees what is stored: the canary's text is in Redis's streams and AOF, in
    # Qdrant's files, and the refusals are in the log (which names kinds, never text).
    seen = {name for name, data in stores.items() if canary.encode() in data}
    assert "redis" in seen and any(str(server.qdrant) in name for name in seen), seen
    assert not aof_before or any(str(p) in seen for p in aof_before), seen
    assert b"write_blocked" in stores[str(server.log)]


async def test_pii_is_stored_redacted(server: Server) -> None:
    async with _client(server, "key-a") as c:
        for item in PII[:12]:
            body = {"text": item.text, "metadata": {"n": {"t": [item.text]}}}
            r = await c.post("/v1/memories", json=body)
            assert r.status_code == 201 and r.json()["status"] == "redacted", (item.kind, r.text)
            rec = (await c.get(f"/v1/memories/{r.json()['id']}")).json()
            assert item.value not in rec["text"] and "[REDACTED_" in rec["text"]
            assert item.value not in json.dumps(rec["metadata"], ensure_ascii=False)
        # PATCH screens as a write does: new metadata is stored redacted.
        item = PII[0]
        r = await c.patch(f"/v1/memories/{rec['id']}", json={"metadata": {"who": item.text}})
        assert r.status_code == 200, r.text
        assert item.value not in json.dumps(r.json()["metadata"]), r.json()["metadata"]


# --- probe shapes are answered fast, and another tenant's recalls keep their pace --------

_SIZE = 100_000
_ROUNDS = 2  # of every shape: enough recalls meanwhile for a p95 that one outlier does not make
_BUSY_MACHINE_S = 0.1  # recall p95 with nothing else to do, past which the machine is busy


def _probe_texts() -> dict[str, str]:
    phones = " ".join(f"({200 + i % 700}) 555-{i % 10000:04d}" for i in range(_SIZE // 15))
    return {
        "sk-": "sk-" * (_SIZE // 3),
        "a.": "a." * (_SIZE // 2 - 1),
        "1-": "1-" * (_SIZE // 2 - 1),
        "digits": "7" * _SIZE,
        "base64": ("QUJDRGVm" * (_SIZE // 8)),
        "password=": "password=" * (_SIZE // 9),
        "phones": phones[:_SIZE],
        "12.": "12." * (_SIZE // 3),
        "emails": "ab@c.de " * (_SIZE // 8),
        "ipv6": "::1:" * (_SIZE // 4),
        "secret:": "secret: Jennifer " * (_SIZE // 17),
    }


def _probe_metadata() -> dict[str, object]:
    """Nested metadata full of probe strings, at the 16 kB metadata limit."""
    chunk = {k: v[:1_400] for k, v in _probe_texts().items()}
    return {"a": {"b": [chunk, {"c": list(chunk.values())[:2]}]}}


# Of the machine's CPU, the share other processes may take while this test measures: past
# it the figures describe the neighbours, not this server, and the test skips.
_OTHERS_SHARE = 0.25


def _tree_ticks(root: int) -> int:
    """CPU ticks used so far by `root` and its descendants (here: this test, the server,
    its fork server and firewall workers, its parse process), from /proc."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        pid = int(stat.parent.name)
        parent[pid], ticks[pid] = int(fields[1]), sum(map(int, fields[11:15]))
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, up in parent.items() if up == pid and child not in tree]
    return sum(ticks.get(pid, 0) for pid in tree)


def _busy_ticks() -> int:
    """CPU ticks the whole machine has used (all but idle and I/O wait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4]


def _cpu_mark() -> tuple[float, int, int]:
    return time.monotonic(), _busy_ticks(), _tree_ticks(os.getpid())


def _others_share(since: tuple[float, int, int]) -> float:
    """The share of the machine's CPU that processes outside this test used since `since`."""
    wall, busy, ours = since
    capacity = (time.monotonic() - wall) * (os.cpu_count() or 1) * os.sysconf("SC_CLK_TCK")
    others = (_busy_ticks() - busy) - (_tree_ticks(os.getpid()) - ours)
    return max(0.0, others / capacity)


async def _recall(c: httpx.AsyncClient, took: list[float]) -> None:
    t0 = time.perf_counter()
    r = await c.post("/v1/recall", json={"query": "Which city did Maria move to?"})
    took.append(time.perf_counter() - t0)
    assert r.status_code == 200, r.text


async def _recall_loop(c: httpx.AsyncClient, stop: asyncio.Event, took: list[float]) -> None:
    while not stop.is_set():
        await _recall(c, took)


async def _probe(
    c: httpx.AsyncClient, body: dict[str, object], took: dict[str, float], name: str
) -> None:
    """Posts `body`; `took[name]`: the slowest answer of its rounds."""
    t0 = time.perf_counter()
    r = await c.post("/v1/memories", json=body)
    took[name] = max(took.get(name, 0.0), time.perf_counter() - t0)
    assert r.status_code in (201, 422), (name, r.status_code, r.text[:200])


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


async def test_probe_shapes_are_answered_fast_while_another_tenant_recalls(server: Server) -> None:
    async with _client(server, "key-a") as a, _client(server, "key-b") as b:
        for city in ("Lisbon", "Oslo", "Kyoto", "Lima", "Quito"):
            r = await b.post("/v1/memories", json={"text": f"Maria moved to {city} for work."})
            assert r.status_code == 201
        await settle(b)
        baseline: list[float] = []
        for _ in range(20):
            await _recall(b, baseline)
        stop, recalls, took = asyncio.Event(), [], {}
        since = _cpu_mark()
        loop = asyncio.create_task(_recall_loop(b, stop, recalls))
        bodies = {name: {"text": t} for name, t in _probe_texts().items()}
        bodies["metadata"] = {"text": "a note", "metadata": _probe_metadata()}
        names = list(bodies) * _ROUNDS
        for i in range(0, len(names), 3):  # three at a time from one tenant, as the probe did
            group = names[i : i + 3]
            await asyncio.gather(*(_probe(a, bodies[n], took, n) for n in group))
        stop.set()
        await loop
    others = _others_share(since)
    report = {n: round(t * 1000) for n, t in sorted(took.items(), key=lambda kv: -kv[1])}
    print(
        f"probe ms {report}; recall p95 {_p95(recalls) * 1000:.0f} ms over {len(recalls)} "
        f"(alone: p95 {_p95(baseline) * 1000:.0f} ms); other processes took {others:.0%} "
        "of the CPU meanwhile"
    )
    if others > _OTHERS_SHARE or _p95(baseline) > _BUSY_MACHINE_S:
        pytest.skip(f"the machine was busy with other work ({others:.0%} of its CPU)")
    assert max(took.values()) < 1.0, report
    assert _p95(recalls) < 0.2, _p95(recalls)
