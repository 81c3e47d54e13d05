"""Reconsolidation through the HTTP API on a real server (Redis, Qdrant Edge, the graph
server): a memory a recall delivered is rewritten by a later write that updates it, its
history holds both texts, an unrelated statement or a memory no recall delivered is left
alone, the cooldown holds, feedback's request rewrites from stored newer information, and
another tenant cannot read the history (through pcm-client). The claim rules on real
Redis: cooldown, the recall's budget, the labile window."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

import pytest
from redis.asyncio import Redis

from pcm_client import AsyncPcmClient, NotFound
from pcm_common.messaging.bus import Bus
from pcm_common.messaging.reconsolidation import request_reconsolidation
from pcm_common.runtime.config import PcmSettings
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.lability import Claim, Lability, LabilityRules
from tests.conftest import KEYS, TEST_REDIS, TEST_REDIS_URL, settle

TENANT_A = KEYS["key-a"]


async def store(c: AsyncPcmClient, text: str, user: str) -> str:
    r = await c.store(text, user_id=user)
    assert r.status == "created" and r.id, r
    return r.id


async def recall(c: AsyncPcmClient, query: str, user: str) -> list[str]:
    out = await c.recall(query, user_id=user, k=5)
    return [i.memory_id for i in out.situational_context]


async def memory(c: AsyncPcmClient, memory_id: str) -> dict[str, Any]:
    """The memory as the server sent it."""
    return (await c.get(memory_id)).model_dump(mode="json", exclude_unset=True)


async def history(c: AsyncPcmClient, memory_id: str) -> list[dict[str, Any]]:
    """The memory's versions as the server sent them."""
    got = await c.history(memory_id)
    return [v.model_dump(mode="json", exclude_unset=True) for v in got.versions]


async def version_reached(
    c: AsyncPcmClient, memory_id: str, version: int, within_s: float = 60.0
) -> dict[str, Any]:
    """Poll until the sweeper wrote `version` of the memory (or fail with what it has)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        got = await memory(c, memory_id)
        if got["version"] >= version or loop.time() > deadline:
            return got
        await asyncio.sleep(0.2)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


async def delivered(c: AsyncPcmClient, text: str, query: str, who: str) -> str:
    """A memory stored and delivered by a recall, the recall's side effects applied."""
    mid = await store(c, text, who)
    await settle(c)
    assert mid in await recall(c, query, who)
    await settle(c)
    return mid


async def test_an_update_rewrites_a_recalled_memory_and_keeps_its_history(
    pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    who = user()
    old = "The frontend uses React."
    mid = await delivered(pcm_a, old, "What does the frontend use?", who)
    update = "We're migrating the frontend from React to Svelte."
    await store(pcm_a, update, who)
    got = await version_reached(pcm_a, mid, 2)
    assert got["version"] == 2, got
    assert got["text"].startswith("We're migrating the frontend from React to Svelte")
    assert "(before: The frontend uses React)" in got["text"]

    versions = await history(pcm_a, mid)
    assert [v["version"] for v in versions] == [1, 2]
    assert versions[0]["text"] == old and versions[0]["reason"] == "reconsolidation"
    assert versions[1]["text"] == got["text"] and versions[1]["current"] is True
    assert at(versions[0]["at"]) == at(got["created_at"])
    assert at(versions[1]["at"]) == at(versions[0]["changed_at"])

    # The cooldown (60 s by default): a second update at once rewrites nothing more.
    await store(pcm_a, "We dropped Svelte and the frontend is moving to Vue instead.", who)
    await settle(pcm_a)
    assert (await memory(pcm_a, mid))["version"] == 2

    # Another tenant's key does not find the memory, nor its history.
    with pytest.raises(NotFound) as nf:
        await pcm_b.history(mid)
    assert nf.value.code == "memory_not_found"


async def test_a_statement_about_the_same_subject_that_is_no_update_rewrites_nothing(
    pcm_a: AsyncPcmClient,
) -> None:
    who = user()
    mid = await delivered(pcm_a, "The standup is at 9:30.", "When is the standup?", who)
    await store(pcm_a, "The standup is held in the small meeting room.", who)
    await store(pcm_a, "Should we move the standup to 10:00?", who)
    await settle(pcm_a)
    got = await memory(pcm_a, mid)
    assert got["version"] == 1 and got["text"] == "The standup is at 9:30."
    assert [v["version"] for v in await history(pcm_a, mid)] == [1]


async def test_a_memory_no_recall_delivered_is_not_rewritten(pcm_a: AsyncPcmClient) -> None:
    who = user()
    mid = await store(pcm_a, "Our logging goes to Splunk.", who)
    await settle(pcm_a)
    await store(pcm_a, "We moved our logging off Splunk and onto Datadog.", who)
    await settle(pcm_a)
    assert (await memory(pcm_a, mid))["version"] == 1


async def test_feedback_request_rewrites_from_newer_stored_information(
    pcm_a: AsyncPcmClient,
) -> None:
    who = user()
    mid = await store(pcm_a, "The standup is at 9:30.", who)
    await settle(pcm_a)
    # No change cue: alone it is no update (the test above) ...
    await store(pcm_a, "The standup is at 10:15.", who)
    await settle(pcm_a)
    assert (await memory(pcm_a, mid))["version"] == 1
    # ... but once feedback says the earlier one is wrong, it is.
    bus = Bus(PcmSettings(redis_url=TEST_REDIS_URL))
    try:
        await request_reconsolidation(bus, TENANT_A, mid, "wrong")
    finally:
        await bus.stop()
    got = await version_reached(pcm_a, mid, 2)
    assert got["version"] == 2, got
    assert got["text"].startswith("The standup is at 10:15") and "9:30" in got["text"]


async def test_wrong_feedback_through_the_api_rewrites_the_memory(
    pcm_a: AsyncPcmClient,
) -> None:
    """`POST /v1/memories/{id}/feedback {"signal": "wrong"}` asks for the rewrite itself."""
    who = user()
    mid = await store(pcm_a, "The office wifi password rotates every Monday.", who)
    await settle(pcm_a)
    await store(pcm_a, "The office wifi password rotates every Friday.", who)
    await settle(pcm_a)
    assert (await memory(pcm_a, mid))["version"] == 1
    r = await pcm_a.memory_feedback(mid, "wrong")
    assert r.reconsolidation == [mid]
    got = await version_reached(pcm_a, mid, 2)
    assert got["version"] == 2, got
    assert "Friday" in got["text"] and "Monday" in got["text"]
    assert any(v["text"].endswith("every Monday.") for v in await history(pcm_a, mid))


# ---- the claim rules on real Redis ------------------------------------------------------


@pytest.fixture
async def redis() -> Any:
    r = Redis.from_url(f"{TEST_REDIS}/14")
    yield r
    await r.aclose()


async def test_claims_keep_the_cooldown_the_budget_and_the_window(redis: Redis) -> None:
    tenant = f"claims-{uuid.uuid4().hex[:6]}"
    rules = LabilityRules(labile_s=1.0, cooldown_s=0.3, max_per_recall=2)
    lab = Lability(redis, rules)
    await lab.mark(tenant, ["m1", "m2", "m3"], "recall-1")
    assert await lab.labile(tenant, ["m1", "m9"]) == {"m1": "recall-1"}
    # Every key of the family carries the tenant's hash tag.
    names = [k.decode() async for k in redis.scan_iter(match=keys.labile_pattern(tenant))]
    assert names and all(keys.tenant_tag(tenant) in n for n in names)

    assert await lab.claim(tenant, "m1", "recall-1") is Claim.CLAIMED
    assert await lab.claim(tenant, "m1", "recall-1") is Claim.COOLING
    assert await lab.claim(tenant, "m2", "recall-2") is Claim.NOT_LABILE  # another's
    assert await lab.claim(tenant, "m2", "recall-1") is Claim.CLAIMED
    assert await lab.claim(tenant, "m3", "recall-1") is Claim.SPENT  # 2 per recall
    await asyncio.sleep(0.35)
    assert await lab.claim(tenant, "m1", "recall-1") is Claim.SPENT  # cooled, still spent
    await lab.mark(tenant, ["m1"], "recall-3")
    assert await lab.claim(tenant, "m1", "recall-3") is Claim.CLAIMED
    await lab.release(tenant, "m1")  # a failed rewrite gives its cooldown back
    assert await lab.claim(tenant, "m1", "recall-3") is Claim.CLAIMED
    await asyncio.sleep(1.05)
    assert await lab.labile(tenant, ["m1", "m2", "m3"]) == {}
