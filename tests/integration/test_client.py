"""pcm_client against the real all-in-one server: every operation through both clients,
typed answers, a retried write stored once, and PCM's refusals as their exception classes.
The blocking client runs in a worker thread (the server runs in the test's event loop)."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from redis.asyncio import Redis

import pcm_client
from pcm_client import AsyncPcmClient, PcmClient
from pcm_common.access.apikeys import KeyStore
from tests.conftest import KEYS, TEST_REDIS_URL, settle

RUN = uuid.uuid4().hex[:8]


async def _data_key() -> str:
    """A `data` key of tenant a (key-a, from the configuration, is an admin key)."""
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        return (await KeyStore(redis).create(KEYS["key-a"], "data")).key
    finally:
        await redis.aclose()


async def test_every_operation_through_the_async_client(
    pcm_url: str, client_a: httpx.AsyncClient
) -> None:
    project, workspace = f"client-p-{RUN}", f"client-w-{RUN}"
    where = {"project": project, "workspace": workspace}
    async with AsyncPcmClient(pcm_url, "key-a") as pcm:
        fact = "The Juniper build farm runs on eight ARM runners in Lisbon."
        stored = await pcm.store(fact, importance="high", metadata={"ticket": 7}, **where)
        assert stored.status == "created" and stored.id
        memory = await pcm.get(stored.id)
        assert (memory.scope, memory.project, memory.importance) == ("project", project, "high")
        assert memory.source == "api" and memory.metadata == {"ticket": 7} and memory.version == 1
        assert memory.model_extra and "current_strength" in memory.model_extra  # the rest

        more = await pcm.store_batch(
            [{"text": f"Juniper runner {n} was reimaged on day {n}.", **where} for n in (1, 2)]
        )
        assert [r.status for r in more.results] == ["created", "created"]
        await settle(client_a)

        recalled = await pcm.recall("Where does the Juniper build farm run?", k=5, **where)
        assert recalled.situational_context[0].memory_id == stored.id
        assert "Lisbon" in recalled.prompt and not recalled.empty

        updated = await pcm.update(stored.id, text=fact.replace("eight", "ten"))
        assert updated.version == 2
        history = await pcm.history(stored.id)
        assert [v.text for v in history.versions] == [fact, fact.replace("eight", "ten")]
        assert history.versions[-1].current

        assert (await pcm.pin(stored.id)).pinned is True
        pinned = await pcm.list_memories(pinned=True, project=project)
        assert [m["id"] for m in pinned.items] == [stored.id]
        every = [m["id"] async for m in pcm.iter_memories(project=project, page_size=1)]
        assert sorted(every) == sorted([stored.id, *(r.id for r in more.results)])
        counts = await pcm.stats(project=project)
        assert counts["pinned"] == 1 and counts["by_state"]["active"] == 3

        await pcm.set_policy("project", project=project, retention_days=30)
        policies = await pcm.policies("project", project=project)
        assert policies["effective"]["retention_days"] == 30
        await pcm.clear_policy("project", project=project)

        assert (await pcm.consolidate()).job == "consolidation"
        assert "consolidation" in (await pcm.jobs())["jobs"]
        assert (await pcm.ready()).ready is True
        assert "pending" in await pcm.pipeline()

        await pcm.delete(stored.id)
        with pytest.raises(pcm_client.NotFound) as gone:
            await pcm.get(stored.id)
        assert gone.value.code == "memory_not_found" and gone.value.status == 404


async def test_a_retried_write_is_stored_once(pcm_url: str, client_a: httpx.AsyncClient) -> None:
    project = f"client-idem-{RUN}"
    key = uuid.uuid4().hex
    async with AsyncPcmClient(pcm_url, "key-a") as pcm:
        text = "The Osprey release train leaves every second Thursday."
        first = await pcm.store(text, project=project, idempotency_key=key)
        assert first.id is not None
        await settle(client_a)
        strength = (await pcm.get(first.id)).model_extra or {}
        again = await pcm.store(text, project=project, idempotency_key=key)
        assert again.id == first.id and again.status == first.status == "created"
        await settle(client_a)
        assert (await pcm.stats(project=project))["memories"] == 1
        replayed = (await pcm.get(first.id)).model_extra or {}
        assert replayed["strength"] == strength["strength"]  # not even counted as a repeat
        # Without the same key the same text is a new write: a repeat, reinforced.
        repeat = await pcm.store(text, project=project)
        assert repeat.id == first.id and repeat.status == "reinforced"
        # The same key with another body is the caller's mistake, said as such.
        with pytest.raises(pcm_client.ValidationError) as reused:
            await pcm.store("Something else.", project=project, idempotency_key=key)
        assert reused.value.code == "idempotency_key_reused"


async def test_refusals_raise_their_classes_and_change_nothing(
    pcm_url: str, client_a: httpx.AsyncClient
) -> None:
    project = f"client-refused-{RUN}"
    async with AsyncPcmClient(pcm_url, "key-a") as pcm:
        with pytest.raises(pcm_client.SecretDetected) as secret:
            await pcm.store("the aws key is AKIAIOSFODNN7EXAMPLE", project=project)
        assert secret.value.status == 422 and "secret_detected" in str(secret.value)
        with pytest.raises(pcm_client.ValidationError) as invalid:
            await pcm.recall("anything", k=0)  # the server's limit, the server's answer
        assert invalid.value.code == "invalid_request"
        with pytest.raises(pcm_client.NotFound):
            await pcm.get("not-a-memory-id")
        await pcm.set_policy("project", project=project, capture_mode="hooks_only")
        with pytest.raises(pcm_client.CaptureRefused):
            await pcm.store("An explicit note.", project=project)
        await pcm.clear_policy("project", project=project)
        await settle(client_a)
        assert (await pcm.list_memories(project=project)).items == []  # nothing stored
        mine = await pcm.store("Only tenant a knows the Falcon codename.", project=project)

    async with AsyncPcmClient(pcm_url, "not-a-key") as stranger:
        with pytest.raises(pcm_client.Unauthorized) as unknown:
            await stranger.stats()
        assert unknown.value.code == "unknown_api_key"
    async with AsyncPcmClient(pcm_url, "key-b") as other:
        with pytest.raises(pcm_client.NotFound):
            await other.get(str(mine.id))  # another tenant's memory does not exist for b
    async with AsyncPcmClient(pcm_url, await _data_key()) as data:
        assert (await data.consolidate()).job == "consolidation"  # a data key may
        with pytest.raises(pcm_client.Forbidden) as forbidden:
            await data.run_job("demotion")
        assert forbidden.value.code == "forbidden"


def _sync_store(url: str, project: str) -> str:
    with PcmClient(url, "key-a") as pcm:
        stored = pcm.store("The Heron staging cluster is in Oslo.", project=project)
        assert stored.id is not None
        return stored.id


def _sync_use(url: str, project: str, mid: str) -> tuple[str, list[str]]:
    with PcmClient(url, "key-a") as pcm:
        recalled = pcm.recall("Where is the Heron staging cluster?", project=project)
        listed = [m["id"] for m in pcm.iter_memories(project=project)]
        pcm.delete(mid)
        with pytest.raises(pcm_client.NotFound):
            pcm.delete(mid)
        return recalled.situational_context[0].memory_id, listed


async def test_the_blocking_client(pcm_url: str, client_a: httpx.AsyncClient) -> None:
    project = f"client-sync-{RUN}"
    mid = await asyncio.to_thread(_sync_store, pcm_url, project)
    await settle(client_a)
    recalled, listed = await asyncio.to_thread(_sync_use, pcm_url, project, mid)
    assert recalled == mid and listed == [mid]


async def test_feedback_through_both_clients(pcm_url: str, client_a: httpx.AsyncClient) -> None:
    project = f"client-fb-{RUN}"
    async with AsyncPcmClient(pcm_url, "key-a") as pcm:
        stored = await pcm.store("The Juniper nightly build starts at 02:00 UTC.", project=project)
        await settle(client_a)
        recalled = await pcm.recall("When does the Juniper nightly build start?", project=project)
        assert recalled.recall_id
        out = await pcm.recall_feedback(recalled.recall_id, helpful=[stored.id])
        assert out.changed == {stored.id: "helpful"} and out.reinforced == [stored.id]
        again = await pcm.recall_feedback(recalled.recall_id, helpful=[stored.id])
        assert again.changed == {} and again.unchanged == [stored.id]
        with pytest.raises(pcm_client.NotFound):
            await pcm.recall_feedback(uuid.uuid4().hex, helpful=[stored.id])
        with pytest.raises(pcm_client.ValidationError):
            await pcm.recall_feedback(recalled.recall_id, missed=[stored.id])  # delivered

    def blocking() -> tuple[dict[str, str], list[str]]:
        with PcmClient(pcm_url, "key-a") as pcm:
            out = pcm.memory_feedback(stored.id, "wrong")
            return out.changed, out.reconsolidation

    assert await asyncio.to_thread(blocking) == ({stored.id: "wrong"}, [stored.id])
