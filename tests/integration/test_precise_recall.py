"""Precise recall (`precision: "precise"`) through the HTTP API on the real all-in-one
server: a tenant holding two users' memories, one of whom has an ops fact, chatter on
other days, a running routine with an outlier and a phone routine that stopped."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from pcm_cli.testing import settle
from pcm_client import NO_RETRY, AsyncPcmClient
from pcm_recall.precise import text_key
from tests.integration.test_anomaly_flags import T0, calls, runs

RUN = uuid.uuid4().hex[:8]
ANA, BEN = f"ana-{RUN}", f"ben-{RUN}"
ANSWER = "The staging database moved to the db-stage-07 host in Frankfurt."
STAGING_DAY = T0 + timedelta(days=15, hours=2)
# One working session (an automatic episode: within the hour), the answer in the middle.
OPS = [
    "Ops sync: we are moving the staging database this week.",
    ANSWER,
    "Remember to update the staging connection strings in the deploy config.",
]
# Weakly related: it shares "database" with the question, so in a store this small its
# fused rank score stays near the answer's, and its cosine clears the per-memory floor
# tuned on LoCoMo. It may be delivered itself; it must not bring its neighbours.
BOOK = "I should finally read that book on the history of database design."
# Chatter of another day, the book's session.
CHATTER = [
    "Lunch at the Thai place was good, the green curry is spicy.",
    BOOK,
    "The gym membership renews next month, check the price.",
    "Weekend plan: hike to the lake if it does not rain.",
    "The production deploy went out at 16:00 without problems.",
]
# Ben's memories: never part of Ana's answers, however close.
BEN_TEXTS = [
    "The staging database moved to db-ben-99 in Dublin, says Ben.",
    "Ben's team ships the mobile release on Thursday.",
]
NOW = T0 + timedelta(days=19)


def key_b(url: str) -> AsyncPcmClient:
    return AsyncPcmClient(url, "key-b", timeout=60, retry=NO_RETRY)


async def write(c: AsyncPcmClient, text: str, at: Any, user: str, **more: Any) -> None:
    r = await c.store(text, created_at=at, user_id=user, **more)
    assert r.id, r  # stored, not skipped


@pytest.fixture(scope="module")
async def tenant(pcm_url: str) -> str:
    """Stores everything once for the module's tests (a tenant of its own: key-b)."""
    async with key_b(pcm_url) as c:
        for text, at in [*runs(10, outlier_at=8), *calls(8, T0 - timedelta(days=70))]:
            await write(c, text, at, ANA)
        for i, text in enumerate(OPS):
            await write(c, text, STAGING_DAY + timedelta(minutes=2 * i), ANA)
        # The same fact also stored for the ops workspace: two memories, one text.
        await write(c, ANSWER, STAGING_DAY + timedelta(minutes=30), ANA, workspace="ops")
        for i, text in enumerate(CHATTER):
            await write(c, text, STAGING_DAY + timedelta(days=1, minutes=3 * i), ANA)
        for i, text in enumerate(BEN_TEXTS):
            await write(c, text, STAGING_DAY + timedelta(minutes=i), BEN)
        await settle(c)
    return pcm_url


async def recall(url: str, query: str, **more: Any) -> dict[str, Any]:
    """The answer as the server sent it."""
    async with key_b(url) as c:
        out = await c.recall(query, user_id=ANA, workspace="ops", now=NOW, **more)
        return out.model_dump(mode="json", exclude_unset=True)


def texts(body: dict[str, Any]) -> list[str]:
    return [i["text"] for i in [*body["situational_context"], *body["episode_context"]]]


async def test_precise_recall_delivers_the_answer_first_and_nothing_unrelated(
    tenant: str,
) -> None:
    query = "Where did the staging database move to?"
    body = await recall(tenant, query, precision="precise")
    assert body["situational_context"][0]["text"] == ANSWER
    shown = texts(body)
    # Each text once, though the answer is stored twice (global and the ops workspace).
    assert len({text_key(t) for t in shown}) == len(shown)
    assert sum(t == ANSWER for t in shown) == 1
    # Episode neighbours only from the strong seed's session; no chatter, no Ben.
    assert {i["text"] for i in body["episode_context"]} <= set(OPS)
    assert set(shown) <= {*OPS, BOOK}
    assert set(OPS) <= set(shown)
    assert body["anomaly_flags"] == []  # the request touches no routine
    assert body["empty"] is False and "db-stage-07" in body["prompt"]

    # The standard recall of the same request shows the duplicate and more besides.
    standard = await recall(tenant, query)
    assert sum(t == ANSWER for t in texts(standard)) == 2
    assert len(texts(standard)) > len(shown)


async def test_precise_recall_of_nothing_relevant_is_the_empty_answer(tenant: str) -> None:
    body = await recall(tenant, "What is a good recipe for banana bread?", precision="precise")
    assert body["empty"] is True
    assert body["situational_context"] == [] and body["episode_context"] == []
    assert body["anomaly_flags"] == []
    assert body["prompt"].endswith("No relevant memories found")


async def test_precise_flags_only_the_routine_the_request_touches(tenant: str) -> None:
    run = await recall(tenant, "How was my last run on the river path?", precision="precise")
    kinds = {f["kind"] for f in run["anomaly_flags"]}
    assert kinds == {"surprise"} and "1:04:12" in run["anomaly_flags"][0]["text"]

    mom = await recall(tenant, "How long did I talk with Mom on the phone?", precision="precise")
    flagged = mom["anomaly_flags"]
    assert [f["kind"] for f in flagged] == ["stopped_routine"]
    assert flagged[0]["usual_interval_days"] == pytest.approx(7.0, abs=0.1)


async def test_precision_is_checked_and_standard_is_the_default(tenant: str) -> None:
    async with httpx.AsyncClient(
        base_url=tenant, headers={"Authorization": "Bearer key-b"}, timeout=60
    ) as c:
        # An unknown precision is the wire's refusal (the typed client would not send it).
        r = await c.post("/v1/recall", json={"query": "staging", "precision": "exact"})
        assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    query = "Where did the staging database move to?"
    default = await recall(tenant, query)
    named = await recall(tenant, query, precision="standard")
    # The same memories (the first recall's reinforcement may reorder equal scores).
    assert sorted(texts(default)) == sorted(texts(named))
