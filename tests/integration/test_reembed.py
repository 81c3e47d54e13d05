"""Moving a store to another embedding model (issue 37, point 5), against a real all-in-one
server of its own (the session's server keeps its model), through pcm-client: a few hundred
memories are re-embedded from the float MiniLM to the per-token int8 one (two local models
whose vectors do not compare) while a loop recalls; no recall fails, recall after the switch
finds the same memories, and the store reports the new model. Writes made during the job are
found after it. Who may run it: an operator key only (PCM_OPERATOR_KEYS); a tenant's admin
key and a data key get 403 `operator_only`. The route's other refusals: an unknown or the
current model (422), a second job while one runs (409)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pcm_cli.testing import running_server
from pcm_client import (
    NO_RETRY,
    AsyncPcmClient,
    OperatorOnly,
    RecallOut,
    ReembedOut,
    ReembedRunning,
    ValidationError,
)
from tests.conftest import KEYS, TEST_REDIS, service_env, settle
from tests.integration.test_cli import ok, pcm

FROM_MODEL = "pcm-local/minilm"
TO_MODEL = "pcm-local/minilm-q8t"
RUN = uuid.uuid4().hex[:6]
# The operator's key: tenant a's too (its memories are the ones moved and probed).
OPERATOR_KEY = "key-op"
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
        "PCM_OPERATOR_KEYS": json.dumps({OPERATOR_KEY: KEYS["key-a"]}),
    }
    try:
        async with running_server(env) as url:
            yield url
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _client(url: str, key: str) -> AsyncPcmClient:
    return AsyncPcmClient(url, key, timeout=120, retry=NO_RETRY)


@pytest.fixture
async def admin(server: str) -> AsyncIterator[AsyncPcmClient]:
    async with _client(server, "key-a") as c:  # PCM_API_KEYS are admin keys
        yield c


@pytest.fixture
async def operator(server: str) -> AsyncIterator[AsyncPcmClient]:
    async with _client(server, OPERATOR_KEY) as c:
        yield c


@pytest.fixture
async def other(server: str) -> AsyncIterator[AsyncPcmClient]:
    async with _client(server, "key-b") as c:
        yield c


async def _store(c: AsyncPcmClient, texts: list[str]) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(texts), 100):
        out = await c.store_batch([{"text": t} for t in texts[start : start + 100]])
        ids += [str(r.id) for r in out.results]
    return ids


async def _recall(c: AsyncPcmClient, query: str) -> RecallOut:
    return await c.recall(query, k=5)


def _ids(r: RecallOut) -> set[str]:
    return {s.memory_id for s in r.situational_context}


async def _until_done(c: AsyncPcmClient, within_s: float = 600.0) -> ReembedOut:
    deadline = asyncio.get_running_loop().time() + within_s
    while (job := await c.reembed_status()).status != "done":
        assert job.status in ("running", "switching"), job
        assert asyncio.get_running_loop().time() < deadline, job
        await asyncio.sleep(0.2)
    return job


async def test_recall_answers_throughout_and_finds_the_same_memories(
    admin: AsyncPcmClient, operator: AsyncPcmClient, other: AsyncPcmClient
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
    assert (await operator.reembed_status()).store_model == FROM_MODEL

    # Refusals first. The job moves every tenant's vectors: a tenant's admin key may neither
    # start it nor see it, and a data key neither.
    made = await admin.create_key("data")
    async with _client(admin.url, made["key"]) as data:
        for key in (admin, data):
            with pytest.raises(OperatorOnly) as refused:
                await key.reembed(TO_MODEL)
            assert refused.value.status == 403 and refused.value.code == "operator_only"
            with pytest.raises(OperatorOnly):
                await key.reembed_status()
    # Unknown and current models.
    for model in ("pcm-local/no-such-model", FROM_MODEL):
        with pytest.raises(ValidationError) as bad:
            await operator.reembed(model)
        assert bad.value.status == 422 and bad.value.code == "unknown_model"
    assert (await operator.reembed_status()).status == "none"  # nothing was started

    started = await operator.reembed(TO_MODEL)
    assert started.status in ("running", "switching", "done"), started
    try:  # a second start while it runs, or after it switched
        await operator.reembed(TO_MODEL)
        raise AssertionError("a second job was started")
    except (ReembedRunning, ValidationError) as exc:
        assert exc.code in ("reembed_running", "unknown_model"), exc

    failures: list[str] = []
    recalls = 0
    seen_running = 0
    i = 0
    while True:
        job = await operator.reembed_status()
        if job.status == "done":
            break
        seen_running += 1
        try:
            await _recall(other, questions[i % len(questions)])
            recalls += 1
        except Exception as exc:  # any failed recall is the finding
            failures.append(repr(exc))
        i += 1
    assert seen_running >= 3, "the job ended before recall could run during it"
    assert recalls and not failures, failures

    job = await _until_done(operator)
    assert job.store_model == TO_MODEL and job.model == TO_MODEL
    assert job.from_model == FROM_MODEL and job.done >= 2 * len(texts)
    ready = await admin.ready()
    assert ready.checks["models"]["embedding"] == TO_MODEL, ready

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
    admin: AsyncPcmClient, operator: AsyncPcmClient
) -> None:
    texts, _ = _corpus(200)
    await _store(admin, texts)
    await settle(admin)
    await operator.reembed(TO_MODEL)

    during: list[tuple[str, str]] = []
    n = 0
    while (await operator.reembed_status()).status == "running" and n < 40:
        text = f"Quillon{n} repainted the lighthouse {['teal', 'ochre'][n % 2]} ({RUN})."
        stored = await admin.store(text)
        if (await operator.reembed_status()).status == "running":  # written while it ran
            during.append((str(stored.id), text))
        n += 1
    assert during, "no write landed while the job ran"
    # A change during the job (or its switch: the loop ends when it leaves "running")
    # reaches the new store too.
    changed_id = during[0][0]
    assert (await admin.pin(changed_id)).pinned is True

    job = await _until_done(operator)
    assert job.store_model == TO_MODEL
    await settle(admin)
    for memory_id, text in during:
        r = await _recall(admin, f"Who repainted the lighthouse? {text}")
        assert memory_id in _ids(r), (memory_id, text, r.situational_context)
    assert (await admin.get(changed_id)).pinned is True

    # `pcm reembed` moves it back, following the job to the end; `--status` shows it. A
    # tenant's admin key is refused there too.
    url = admin.url
    refused = await pcm(url, "reembed", "--model", FROM_MODEL, "-q")
    assert refused.exit_code != 0 and "operator_only" in refused.stderr, refused.stderr
    moved = json.loads(ok(await pcm(url, "reembed", "--model", FROM_MODEL, "-q", key=OPERATOR_KEY)))
    assert moved["status"] == "done" and moved["store_model"] == FROM_MODEL, moved
    assert moved["from_model"] == TO_MODEL and moved["done"] >= len(texts) + len(during)
    shown = json.loads(ok(await pcm(url, "reembed", "--status", key=OPERATOR_KEY)))
    assert shown["job_id"] == moved["job_id"]
    refused = await pcm(url, "reembed", "--model", "pcm-local/none", key=OPERATOR_KEY)
    assert refused.exit_code != 0 and "unknown embedding model" in refused.stderr
    r = await _recall(admin, during[0][1])
    assert during[0][0] in _ids(r)
