"""Moving a store to another embedding model (issue 37, point 5), against a real all-in-one
server of its own (the session's server keeps its model): a few hundred memories are
re-embedded from the float MiniLM to the per-token int8 one (two local models whose vectors
do not compare) while a loop recalls; no recall fails, recall after the switch finds the
same memories, and the store reports the new model. Writes made during the job are found
after it. The admin route's refusals: a data key (403), an unknown or the current model
(422), a second job while one runs (409)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pcm_cli.testing import running_server
from tests.conftest import TEST_REDIS, service_env, settle
from tests.integration.test_cli import ok, pcm

FROM_MODEL = "pcm-local/minilm"
TO_MODEL = "pcm-local/minilm-q8t"
RUN = uuid.uuid4().hex[:6]
NAMES = ["Adaeze", "Bartek", "Chiara", "Dmitri", "Esi", "Farid", "Greta", "Hiroshi", "Ines"]
THINGS = [
    ("keeps a parrot named {x}", "What pet does {n} have?"),
    ("is learning to play the {x} on weekends", "Which instrument is {n} learning?"),
    ("flew to {x} for a conference last spring", "Where did {n} fly for a conference?"),
    ("prefers {x} tea in the morning", "What tea does {n} drink?"),
    ("fixed the {x} service outage on Tuesday", "Which outage did {n} fix?"),
    ("is allergic to {x}", "What is {n} allergic to?"),
]
FILLERS = (
    "Mango cello Lisbon jasmine billing peanuts Kiwi oboe Nairobi oolong search shellfish"
    " Pepper banjo Oslo rooibos"
).split()


def _corpus(n: int) -> tuple[list[str], list[str]]:
    """`n` memories about people and facts, and one question per (person, kind)."""
    rnd = random.Random(37)
    texts, questions = [], []
    for i in range(n):
        name = f"{rnd.choice(NAMES)}{i}"
        fact, question = THINGS[i % len(THINGS)]
        texts.append(f"{name} {fact.format(x=rnd.choice(FILLERS))} ({RUN}).")
        questions.append(question.format(n=name))
    return texts, questions


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[str]:
    saved = dict(os.environ)
    env = service_env(tmp_path, f"{TEST_REDIS}/14") | {
        "PCM_EMBEDDING_MODEL": FROM_MODEL,
        "PCM_REEMBED_PAGE": "32",  # several pages, so the job lasts while the loop recalls
        "PCM_NEAR_DUPLICATE_COS": "0.999",
    }
    try:
        async with running_server(env) as url:
            yield url
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
async def admin(server: str) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": "Bearer key-a"}  # PCM_API_KEYS are admin keys
    async with httpx.AsyncClient(base_url=server, headers=headers, timeout=120) as c:
        yield c


@pytest.fixture
async def other(server: str) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": "Bearer key-b"}
    async with httpx.AsyncClient(base_url=server, headers=headers, timeout=120) as c:
        yield c


async def _store(c: httpx.AsyncClient, texts: list[str]) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(texts), 100):
        body = {"memories": [{"text": t} for t in texts[start : start + 100]]}
        r = await c.post("/v1/memories:batch", json=body)
        assert r.status_code == 201, r.text
        ids += [x["id"] for x in r.json()["results"]]
    return ids


async def _recall(c: httpx.AsyncClient, query: str) -> httpx.Response:
    return await c.post("/v1/recall", json={"query": query, "k": 5})


def _ids(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {s["memory_id"] for s in r.json()["situational_context"]}


async def _status(c: httpx.AsyncClient) -> dict[str, Any]:
    r = await c.get("/v1/admin/reembed")
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


async def _until_done(c: httpx.AsyncClient, within_s: float = 600.0) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + within_s
    while (job := await _status(c))["status"] != "done":
        assert job["status"] in ("running", "switching"), job
        assert asyncio.get_running_loop().time() < deadline, job
        await asyncio.sleep(0.2)
    return job


async def test_recall_answers_throughout_and_finds_the_same_memories(
    admin: httpx.AsyncClient, other: httpx.AsyncClient
) -> None:
    texts, questions = _corpus(300)
    ids = await _store(admin, texts)
    await settle(admin)
    # The loop during the job recalls in another tenant holding the same memories: recall
    # reinforces what it returns, and that must not be what moves the probes' answers.
    await _store(other, texts)
    await settle(other)
    asked = random.Random(5).sample(range(len(questions)), 30)
    probes = [questions[i] for i in asked]
    answers = {questions[i]: ids[i] for i in asked}
    before = {q: _ids(await _recall(admin, q)) for q in probes}
    assert sum(1 for got in before.values() if got) >= 25, before
    assert (await _status(admin))["store_model"] == FROM_MODEL

    # Refusals first: unknown and current models, a data key.
    r = await admin.post("/v1/admin/reembed", json={"model": "pcm-local/no-such-model"})
    assert r.status_code == 422 and r.json()["error"] == "unknown_model", r.text
    r = await admin.post("/v1/admin/reembed", json={"model": FROM_MODEL})
    assert r.status_code == 422 and r.json()["error"] == "unknown_model", r.text
    made = await admin.post("/v1/admin/keys", json={"role": "data"})
    assert made.status_code == 201, made.text
    data_key = {"Authorization": f"Bearer {made.json()['key']}"}
    r = await admin.post("/v1/admin/reembed", json={"model": TO_MODEL}, headers=data_key)
    assert r.status_code == 403, r.text

    r = await admin.post("/v1/admin/reembed", json={"model": TO_MODEL})
    assert r.status_code == 202, r.text
    assert r.json()["status"] in ("running", "switching", "done"), r.text
    again = await admin.post("/v1/admin/reembed", json={"model": TO_MODEL})
    assert again.status_code in (409, 422), again.text  # running, or already switched

    statuses: list[int] = []
    seen_running = 0
    i = 0
    while True:
        job = await _status(admin)
        if job["status"] == "done":
            break
        seen_running += 1
        statuses.append((await _recall(other, questions[i % len(questions)])).status_code)
        i += 1
    assert seen_running >= 3, "the job ended before recall could run during it"
    assert statuses and all(s == 200 for s in statuses), statuses

    job = await _until_done(admin)
    assert job["store_model"] == TO_MODEL and job["model"] == TO_MODEL
    assert job["from_model"] == FROM_MODEL and job["done"] >= 2 * len(texts)
    ready = (await admin.get("/readyz")).json()
    assert ready["checks"]["models"]["embedding"] == TO_MODEL, ready

    after = {q: _ids(await _recall(admin, q)) for q in probes}
    # The memory a question is about, found before, is found after.
    found = [q for q in probes if answers[q] in before[q]]
    kept = [q for q in found if answers[q] in after[q]]
    assert len(found) >= 20 and len(kept) >= 0.9 * len(found), (found, kept)
    # And most of the rest of the top 5 stays. Not all: the other four are near ties (fifty
    # memories share each sentence pattern), which a model a cos ~0.99 away reorders, and
    # rank fusion with the lexical ranking turns a swapped rank into a swapped member
    # (runs gave 0.58-0.61, the answer always kept; the two models' own cosine top 5 agree
    # at 0.93, docs/decisions/0056-reembed.md).
    overlaps = [len(before[q] & after[q]) / len(before[q]) for q in probes if before[q]]
    assert sum(overlaps) / len(overlaps) >= 0.5, overlaps


async def test_writes_during_the_job_are_found_after_the_switch(
    admin: httpx.AsyncClient,
) -> None:
    texts, _ = _corpus(200)
    await _store(admin, texts)
    await settle(admin)
    r = await admin.post("/v1/admin/reembed", json={"model": TO_MODEL})
    assert r.status_code == 202, r.text

    during: list[tuple[str, str]] = []
    n = 0
    while (await _status(admin))["status"] == "running" and n < 40:
        text = f"Quillon{n} repainted the lighthouse {['teal', 'ochre'][n % 2]} ({RUN})."
        r = await admin.post("/v1/memories", json={"text": text})
        assert r.status_code == 201, r.text
        if (await _status(admin))["status"] == "running":  # written while it ran
            during.append((r.json()["id"], text))
        n += 1
    assert during, "no write landed while the job ran"
    # A change during the job reaches the new store too.
    changed_id = during[0][0]
    r = await admin.patch(f"/v1/memories/{changed_id}", json={"pinned": True})
    assert r.status_code == 200, r.text

    job = await _until_done(admin)
    assert job["store_model"] == TO_MODEL
    await settle(admin)
    for memory_id, text in during:
        r = await _recall(admin, f"Who repainted the lighthouse? {text}")
        assert memory_id in _ids(r), (memory_id, text, r.json()["situational_context"])
    got = await admin.get(f"/v1/memories/{changed_id}")
    assert got.status_code == 200 and got.json()["pinned"] is True, got.text

    # `pcm reembed` moves it back, following the job to the end; `--status` shows it.
    url = str(admin.base_url)
    moved = json.loads(ok(await pcm(url, "reembed", "--model", FROM_MODEL, "-q")))
    assert moved["status"] == "done" and moved["store_model"] == FROM_MODEL, moved
    assert moved["from_model"] == TO_MODEL and moved["done"] >= len(texts) + len(during)
    shown = json.loads(ok(await pcm(url, "reembed", "--status")))
    assert shown["job_id"] == moved["job_id"]
    refused = await pcm(url, "reembed", "--model", "pcm-local/none")
    assert refused.exit_code != 0 and "unknown embedding model" in refused.stderr
    r = await _recall(admin, during[0][1])
    assert during[0][0] in _ids(r)
