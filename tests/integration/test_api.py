"""The API end to end on real Redis, Qdrant Edge and the graph server: what the server
does with memories and recalls, through pcm-client (`pcm_a` / `pcm_b`), and the HTTP
contract where the wire is the point, raw (`client_a` / `client_b`): malformed, oversized
and hostile bodies, refusals' bodies, keys, the ops routes and the schema
(docs/client.md, "Where raw HTTP stays")."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from pcm_client import AsyncPcmClient, NotFound, ValidationError
from pcm_client.models import StoreResult
from pcm_common.runtime.http import MAX_BODY_BYTES
from tests.conftest import KEYS, NEO4J_URI, TEST_REDIS_URL, settle


async def store(pcm: AsyncPcmClient, text: str, **extra: Any) -> str:
    return str((await pcm.store(text, **extra)).id)


async def record(pcm: AsyncPcmClient, memory_id: str) -> dict[str, Any]:
    """A memory as the API answers it: `Memory`'s fields and the rest of its record."""
    return (await pcm.get(memory_id)).model_dump(mode="json")


def sent(res: StoreResult) -> dict[str, Any]:
    """A store result as the server sent it."""
    return res.model_dump(mode="json", exclude_unset=True)


def ids(items: Any) -> list[str]:
    return [c.memory_id for c in items]


async def raw_count(client: httpx.AsyncClient) -> int:
    return len((await client.get("/v1/memories", params={"limit": 500})).json()["items"])


async def test_paraphrase_recall_and_empty_result(pcm_a: AsyncPcmClient) -> None:
    target = await store(pcm_a, "Alice moved to Berlin in March and now works at Siemens.")
    await store(pcm_a, "Bob's favourite programming language is Rust.")
    await store(pcm_a, "The team deploys on Fridays only after QA signs off.")

    body = await pcm_a.recall("Which city did Alice relocate to?")
    assert body.situational_context[0].memory_id == target
    for header in ("[ANOMALY FLAGS — PAY ATTENTION]", "[ASKER CONTEXT]", "[SITUATIONAL CONTEXT]"):
        assert header in body.prompt
    assert body.empty is False

    body = await pcm_a.recall("how long to bake sourdough bread")
    assert body.empty is True
    assert "No relevant memories found" in body.prompt


async def test_exact_duplicate_reinforces(pcm_a: AsyncPcmClient) -> None:
    first = await pcm_a.store("Carol prefers tea over coffee.")
    again = await pcm_a.store("carol prefers  tea over coffee.")
    assert sent(again) == {"id": first.id, "status": "reinforced"}
    rec = await record(pcm_a, str(first.id))
    assert len(rec["repeats"]) == 1
    assert rec["strength"]["s_ref"] > 0.6


async def test_near_duplicate_merges_only_with_equal_figures(pcm_a: AsyncPcmClient) -> None:
    a = await store(pcm_a, "Ran 5k in 27:10 this morning along the river.")
    b = await pcm_a.store("Ran 5k in 41:30 this morning along the river.")
    assert b.status == "created" and b.id != a
    c = await pcm_a.store("Ran 5k in 27:10 this morning along the river!")
    assert sent(c) == {"id": a, "status": "merged"}
    # The merged memory keeps its original date and records the repeat at the repeat's.
    rec = await pcm_a.get(a)
    repeats = rec.model_dump()["repeats"]
    assert len(repeats) == 1 and datetime.fromisoformat(repeats[0]) >= rec.created_at


async def test_a_near_duplicate_of_an_archived_memory_brings_it_back(
    pcm_a: AsyncPcmClient,
) -> None:
    old = await store(pcm_a, "Cycled 42 km to Hollow Lake in 1:52 on the gravel road.")
    assert (await pcm_a.update(old, state="archived")).state == "archived"
    again = await pcm_a.store("Cycled 42 km to Hollow Lake in 1:52 on the gravel road!")
    assert sent(again) == {"id": old, "status": "merged"}  # the same event, not a second one
    rec = await record(pcm_a, old)
    assert rec["state"] == "active" and len(rec["repeats"]) == 1


async def test_near_duplicates_inside_one_batch_merge_as_one_at_a_time_would(
    pcm_a: AsyncPcmClient,
) -> None:
    items = [
        {"text": "Swam 40 lengths in 31:05 at the lido.", "created_at": "2024-06-01T07:00:00Z"},
        {"text": "Swam 40 lengths in 35:50 at the lido.", "created_at": "2024-06-02T07:00:00Z"},
        {"text": "Swam 40 lengths in 31:05 at the lido!", "created_at": "2024-06-03T07:00:00Z"},
        {
            "text": "Swam 40 lengths in 31:05 at the lido with Ana.",
            "created_at": "2024-06-04T07:00:00Z",
        },
    ]
    got = (await pcm_a.store_batch(items)).results
    assert [g.status for g in got] == ["created", "created", "merged", "created"]
    assert got[2].id == got[0].id  # the same figures: one event, stored once
    assert len({got[0].id, got[1].id, got[3].id}) == 3  # other time, added name
    rec = await record(pcm_a, str(got[0].id))
    assert rec["created_at"].startswith("2024-06-01")  # the original date stays
    assert [d[:10] for d in rec["repeats"]] == ["2024-06-03"]


async def test_importance_is_inferred_unless_given(pcm_a: AsyncPcmClient) -> None:
    rule = await store(pcm_a, "Never merge to main without a green build.")
    chatter = await store(pcm_a, "haha ok, see ya!")
    plain = await store(pcm_a, "Ivan bought a green bicycle last week.")
    given = await store(pcm_a, "Never water the cactus more than once a month.", importance="low")
    tiers = {}
    for mid in (rule, chatter, plain, given):
        rec = await record(pcm_a, mid)
        tiers[mid] = (rec["importance"], rec["strength"]["s_ref"])
    assert tiers[rule] == ("high", 0.9)
    assert tiers[chatter] == ("low", 0.3)
    assert tiers[plain] == ("normal", 0.6)
    assert tiers[given] == ("low", 0.3)  # an explicit tier wins over the rules


async def test_memories_without_episode_are_grouped_by_time(pcm_a: AsyncPcmClient) -> None:
    async def episode_of(mid: str) -> str | None:
        return (await pcm_a.get(mid)).episode

    me = {"user_id": "ep-kim"}
    a = await store(
        pcm_a, "Kim booked the venue for the offsite.", created_at="2024-02-01T09:00:00Z", **me
    )
    b = await store(
        pcm_a, "Kim ordered lunch for twelve people.", created_at="2024-02-01T09:40:00Z", **me
    )
    c = await store(
        pcm_a, "Kim's flight to Oslo leaves at noon.", created_at="2024-02-01T12:00:00Z", **me
    )
    other = await store(
        pcm_a,
        "Lee reviewed the offsite agenda.",
        created_at="2024-02-01T09:10:00Z",
        user_id="ep-lee",
    )
    named = await store(
        pcm_a,
        "Kim renewed her passport.",
        created_at="2024-02-01T09:20:00Z",
        episode="errands",
        **me,
    )
    first = await episode_of(a)
    assert first is not None and first.startswith("auto-")
    assert await episode_of(b) == first  # 40 minutes later: the same episode
    assert await episode_of(c) not in {None, first}  # over an hour later: a new one
    assert await episode_of(other) not in {None, first}  # another user's stream
    assert await episode_of(named) == "errands"  # a client's episode is kept

    # A batch is placed oldest first, whatever its order.
    out = await pcm_a.store_batch(
        {"text": f"Mo note {n}: {what}", "created_at": at, "user_id": "ep-mo"}
        for n, (what, at) in enumerate(
            [
                ("packed the tent", "2024-03-01T11:20:00Z"),
                ("left home early", "2024-03-01T09:00:00Z"),
                ("reached the lake", "2024-03-01T11:00:00Z"),
                ("stopped for coffee", "2024-03-01T09:30:00Z"),
            ]
        )
    )
    eps = [await episode_of(str(x.id)) for x in out.results]
    assert eps[1] == eps[3] and eps[0] == eps[2] and eps[0] != eps[1]


async def test_write_firewall_blocks_secrets_and_redacts_pii(
    client_a: httpx.AsyncClient, pcm_a: AsyncPcmClient
) -> None:
    """The refusals' bodies are the point (which item, which field, never the secret): raw."""

    async def count() -> int:
        return await raw_count(client_a)

    before = await count()
    key = "AKIAIOSFODNN7EXAMPLE"
    r = await client_a.post("/v1/memories", json={"text": f"the deploy key is {key}"})
    assert r.status_code == 422 and r.json()["error"] == "secret_detected"
    assert r.json()["detail"] == [{"index": 0, "kinds": ["AWS Access Key"]}]
    assert key not in r.text  # the refusal never echoes the secret
    # One secret in a batch refuses the whole batch: nothing of it is stored.
    batch = {"memories": [{"text": "Olga likes plums."}, {"text": f"aws {key}"}]}
    r = await client_a.post("/v1/memories:batch", json=batch)
    assert r.status_code == 422 and r.json()["detail"][0]["index"] == 1
    r = await client_a.post(
        "/v1/memories", json={"text": "Olga likes pears.", "metadata": {"env": f"KEY={key}"}}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "metadata"
    # Names are identifiers, never rewritten: a secret in one blocks; an e-mail user id is fine.
    r = await client_a.post(
        "/v1/memories",
        json={"text": "Olga likes figs.", "scope": "project", "project": f"p-{key}"},
    )
    assert r.status_code == 422
    assert r.json()["detail"] == [{"index": 0, "field": "project", "kinds": ["AWS Access Key"]}]
    assert await count() == before
    figs = await pcm_a.store("Olga likes figs.", user_id="olga@example.com")
    assert figs.status == "created", figs
    await pcm_a.delete(str(figs.id))

    redacted = await pcm_a.store("Reach Olga at olga@example.com.")
    assert redacted.status == "redacted", redacted
    mid = str(redacted.id)
    rec = await record(pcm_a, mid)
    assert rec["text"] == "Reach Olga at [REDACTED_EMAIL]."
    # PATCH goes through the same screen.
    r = await client_a.patch(f"/v1/memories/{mid}", json={"text": f"Olga's key: {key}"})
    assert r.status_code == 422 and r.json()["error"] == "secret_detected"
    r = await client_a.patch(f"/v1/memories/{mid}", json={"metadata": {"note": f"aws {key}"}})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "metadata"
    r = await client_a.patch(f"/v1/memories/{mid}", json={"metadata": {"blob": "x" * 20_000}})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    r = await client_a.patch(f"/v1/memories/{mid}", json={"text": "y" * 100_001})
    assert r.status_code == 413 and r.json()["error"] == "text_too_large"
    assert (await pcm_a.get(mid)).version == rec["version"]


async def test_an_update_supersedes_the_old_fact(pcm_a: AsyncPcmClient) -> None:
    me = {"user_id": "sup-ana"}
    old = await store(pcm_a, "Ana's team standup is at 9:30 every morning.", **me)
    await settle(pcm_a)
    new = await store(pcm_a, "Ana's team standup is now at 10:15 every morning.", **me)
    await settle(pcm_a)
    before = await record(pcm_a, old)
    assert before["state"] == "superseded" and before["superseded_by"] == new
    assert (await record(pcm_a, new))["supersedes"] == old
    hist = await pcm_a.history(old)
    assert hist.superseded_by == new and hist.versions[-1].text.endswith("9:30 every morning.")

    async def recalled(query: str) -> tuple[dict[str, Any], str]:
        r = await pcm_a.recall(query, **me)
        return {c.memory_id: c for c in r.situational_context}, r.prompt

    now, _ = await recalled("When is Ana's team standup?")
    assert new in now and old not in now
    past, prompt = await recalled("When was Ana's team standup before?")
    assert past[old].superseded_by == new and new in past
    assert "(superseded) Ana's team standup is at 9:30" in prompt

    # A chain: a third update supersedes the second; deleting the middle one closes the
    # chain (the first stays superseded, now by the third), it does not revive 9:30.
    third = await store(pcm_a, "Ana's team standup is now at 11:00 every morning.", **me)
    await settle(pcm_a)
    assert (await record(pcm_a, new))["superseded_by"] == third
    await pcm_a.delete(new)
    first = await record(pcm_a, old)
    assert first["state"] == "superseded" and first["superseded_by"] == third
    assert (await record(pcm_a, third))["supersedes"] == old

    # Deleting the update makes the old fact current again.
    await pcm_a.delete(third)
    restored = await record(pcm_a, old)
    assert restored["state"] == "active" and restored.get("superseded_by") is None


async def test_batch_and_created_at(pcm_a: AsyncPcmClient) -> None:
    out = await pcm_a.store_batch(
        [
            {"text": "Dana adopted a beagle named Max.", "created_at": "2023-05-08T13:56:00"},
            {
                "text": "Dana started a pottery class on Tuesdays.",
                "created_at": "2023-05-09T10:00:00Z",
            },
        ]
    )
    got = [str(x.id) for x in out.results]
    rec = await record(pcm_a, got[0])
    assert rec["created_at"].startswith("2023-05-08T13:56:00")
    listed = (await pcm_a.list_memories(limit=500)).items
    assert set(got) <= {m["id"] for m in listed}


async def test_pipeline_settles_and_graph_has_entities(pcm_a: AsyncPcmClient) -> None:
    mid = await store(pcm_a, "Melanie visited Paris with her friend Caroline in June.")
    await settle(pcm_a)
    rec = await record(pcm_a, mid)
    assert rec["graph"]["extracted"] is True
    assert rec["surprisal"]["judged_at"]
    assert {"Melanie", "Paris", "Caroline"} <= set(rec["graph"]["entities"])

    from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore

    graph = Neo4jGraphStore(NEO4J_URI, "neo4j", "pcm-dev-password")
    try:
        names = {e.name for e in await graph.entities_of(KEYS["key-a"], mid)}
    finally:
        await graph.close()
    assert {"Melanie", "Paris", "Caroline"} <= names

    status = await pcm_a.pipeline()
    assert status["pending"] == 0 and status["indexing"] is False
    # Redis agrees with /v1/pipeline: no consumer group holds pending entries.
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        for stream in ("pcm.memory.written", "pcm.memory.extracted"):
            for group in await redis.xinfo_groups(stream):
                assert group["pending"] == 0 and group["lag"] == 0, group
    finally:
        await redis.aclose()


async def test_recall_reinforces_off_the_request_path(pcm_a: AsyncPcmClient) -> None:
    mid = await store(
        pcm_a,
        "Erin's dentist appointment is on the 14th at 9am.",
        created_at="2024-01-01T09:00:00Z",
    )
    before = (await record(pcm_a, mid))["strength"]
    r = await pcm_a.recall("When is Erin's dentist appointment?", now="2024-01-10T09:00:00Z")
    assert r.situational_context[0].memory_id == mid
    await settle(pcm_a)
    after = (await record(pcm_a, mid))["strength"]
    assert after["n"] == before["n"] + 1
    assert after["last_recalled_at"].startswith("2024-01-10")


async def test_bad_input_is_rejected_and_changes_nothing(
    client_a: httpx.AsyncClient, pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient, pcm_url: str
) -> None:
    count = await raw_count(client_a)
    r = await client_a.post(
        "/v1/memories",
        content=b'{"text": "unterminated',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and r.json()["error"] == "malformed_json"
    r = await client_a.post("/v1/memories", json={"text": "   "})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    # Over the settings' limits (100,000 characters, 1,000 items): 413, naming the limit.
    r = await client_a.post("/v1/memories", json={"text": "x" * 100_001})
    assert r.status_code == 413 and r.json()["error"] == "text_too_large", r.text
    many = [{"text": f"note {i}"} for i in range(1_001)]
    r = await client_a.post("/v1/memories:batch", json={"memories": many})
    assert r.status_code == 413 and r.json()["error"] == "batch_too_large", r.text
    r = await client_a.post("/v1/memories:batch", json={"memories": [{"text": "x" * 100_001}]})
    assert r.status_code == 413 and r.json()["error"] == "text_too_large", r.text
    r = await client_a.post("/v1/memories", json={"text": "fine", "bogus": 1})
    assert r.status_code == 422
    # Over the body limit, declared or sent chunked without a length: refused as such.
    too_big = b'{"text": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    r = await client_a.post(
        "/v1/memories", content=too_big, headers={"content-type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["error"] == "payload_too_large"

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(too_big), 1 << 20):
            yield too_big[i : i + (1 << 20)]

    r = await client_a.post(
        "/v1/memories", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
    async with httpx.AsyncClient(base_url=pcm_url) as anon:
        r = await anon.post(
            "/v1/memories", json={"text": "hello"}, headers={"Authorization": "Bearer not-a-key"}
        )
        assert r.status_code == 401 and r.json()["error"] == "unknown_api_key"
        r = await anon.post("/v1/recall", json={"query": "hello"})
        assert r.status_code == 401
    assert await raw_count(client_a) == count

    # Another tenant's memory id: not found, and untouched by patch or delete.
    mid = await store(pcm_a, "Frank keeps his spare key under the blue flowerpot.")
    for attempt in (pcm_b.get(mid), pcm_b.pin(mid), pcm_b.delete(mid)):
        with pytest.raises(NotFound) as missing:
            await attempt
        assert missing.value.code == "memory_not_found"
    assert (await pcm_a.get(mid)).pinned is False
    r = await pcm_b.recall("Where is Frank's spare key?")
    assert mid not in ids(r.situational_context)


async def test_inputs_that_would_break_the_store_or_widen_a_recall_are_refused(
    client_a: httpx.AsyncClient, pcm_a: AsyncPcmClient, pcm_url: str
) -> None:
    """What a hostile client tried against `make run`: each gets a clear 4xx, nothing is
    stored, and the tenant keeps working."""
    count = await raw_count(client_a)
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(199):
        deep = {"a": deep}
    # 200 levels were stored, and every later read of the tenant failed in the engine.
    r = await client_a.post("/v1/memories", json={"text": "Deep meta probe", "metadata": deep})
    assert r.status_code == 422 and "nested deeper" in r.text, r.text
    ok = {"leaf": 1}
    for _ in range(15):
        ok = {"a": ok}  # type: ignore[dict-item]
    kept = await store(pcm_a, "Metadata sixteen levels deep is fine.", metadata=ok)
    # NaN is not JSON; it was stored as null.
    r = await client_a.post(
        "/v1/memories",
        content=b'{"text": "nan probe", "metadata": {"a": NaN}}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422 and "finite" in r.text, r.text
    # Nesting past the JSON decoder's limit: malformed, like any unparsable body.
    body = b'{"text": "x", "metadata": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3001
    r = await client_a.post(
        "/v1/memories", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"] == "malformed_json", r.text
    # Dated far in the future: such a memory would not decay until then.
    r = await client_a.post(
        "/v1/memories",
        json={"text": "Ferret feeding twice daily.", "created_at": "3021-01-01T00:00:00Z"},
    )
    assert r.status_code == 422 and "created_at" in r.text, r.text
    r = await client_a.post(
        "/v1/memories:batch",
        json={
            "memories": [{"text": "fine"}, {"text": "later", "created_at": "9999-12-31T23:59:59Z"}]
        },
    )
    assert r.status_code == 422 and "item 1" in r.text, r.text
    # Invisible text is empty text.
    r = await client_a.post("/v1/memories", json={"text": "\u200b"})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    assert await raw_count(client_a) == count + 1
    # The tenant still reads and writes, the kept memory with its metadata.
    assert (await pcm_a.get(kept)).metadata == ok

    # A page offset that is not an earlier page's next_offset.
    for offset in ("0", "-1", "not-a-uuid"):
        r = await client_a.get("/v1/memories", params={"offset": offset})
        assert r.status_code == 422 and r.json()["error"] == "invalid_request", r.text
    # An empty name would read as "no user" and widen the recall to everyone's memories.
    for field in ("user_id", "workspace", "project"):
        r = await client_a.post("/v1/recall", json={"query": "editor mode", field: ""})
        assert r.status_code == 422, r.text
    r = await client_a.post("/v1/recall", json={"query": "   "})
    assert r.status_code == 422 and r.json()["error"] == "invalid_request"
    # The ops route clients wait on answers without a key, and names no tenant.
    async with httpx.AsyncClient(base_url=pcm_url) as anon:
        r = await anon.get("/v1/pipeline")
        assert r.status_code == 200 and set(r.json()) == {"pending", "streams", "indexing"}
        assert "tenant" not in r.text


async def test_parallel_copies_make_one_memory(pcm_a: AsyncPcmClient) -> None:
    """The same text sent 20 times at once (retries, parallel agents): one memory, every
    other write a repeat of it, each repeat recorded; a batch racing them joins too."""
    text = f"The coffee machine on floor {uuid.uuid4().hex[:6]} is descaled every Monday."
    item = {"text": text, "project": "conc"}
    singles = [pcm_a.store(text, project="conc") for _ in range(20)]
    answers = await asyncio.gather(*singles, pcm_a.store_batch([item] * 5))
    batch = answers[-1]
    assert not isinstance(batch, StoreResult)
    results = [a for a in answers[:-1] if isinstance(a, StoreResult)] + batch.results
    assert len(results) == 25 and len({r.id for r in results}) == 1, results
    statuses = sorted(r.status for r in results)
    assert statuses == ["created"] + ["reinforced"] * 24, statuses
    rec = await record(pcm_a, str(results[0].id))
    assert len(rec["repeats"]) == 24 and rec["scope"] == "project"


async def test_a_patch_racing_a_delete_does_not_bring_it_back(pcm_a: AsyncPcmClient) -> None:
    for n in range(5):
        mid = await store(pcm_a, f"Resurrection probe {n}: the spare router sits in bay {n}.")
        patch = pcm_a.update(mid, text=f"Probe {n} edited.")
        gone = pcm_a.delete(mid)
        p, d = await asyncio.gather(patch, gone, return_exceptions=True)
        assert d is None, d  # deleted
        assert not isinstance(p, BaseException) or isinstance(p, NotFound), p
        with pytest.raises(NotFound):
            await pcm_a.get(mid)


async def test_a_write_naming_a_project_is_that_projects(pcm_a: AsyncPcmClient) -> None:
    """Without `scope`, the narrowest scope the write names; another project never sees it."""
    mid = await store(pcm_a, "Project zeta uses Postgres 16 for the ledger.", project="zeta")
    rec = await pcm_a.get(mid)
    assert (rec.scope, rec.project) == ("project", "zeta")
    ws = await store(pcm_a, "Workspace w1 meets on Tuesdays.", workspace="w1")
    assert (await pcm_a.get(ws)).scope == "workspace"
    query = "Which database does zeta use?"
    got = await pcm_a.recall(query, project="other")
    assert mid not in ids(got.situational_context)
    got = await pcm_a.recall(query, project="zeta")
    assert got.situational_context[0].memory_id == mid


async def test_a_recall_cannot_reinforce_in_the_future(pcm_a: AsyncPcmClient) -> None:
    mid = await store(pcm_a, "The standup is at 9:30 in room Birch.")
    before = await record(pcm_a, mid)
    with pytest.raises(ValidationError) as refused:
        await pcm_a.recall("When is the standup?", now="9999-12-31T23:59:59Z")
    assert refused.value.status == 422 and "now" in str(refused.value), refused.value
    await settle(pcm_a)
    after = await record(pcm_a, mid)
    assert after["strength"] == before["strength"]


async def test_year_one_renders_as_an_iso_date(pcm_a: AsyncPcmClient) -> None:
    mid = await store(
        pcm_a,
        "The Quillfeather archive was founded in year one.",
        created_at="0001-01-01T00:00:00Z",
    )
    r = await pcm_a.recall("When was the Quillfeather archive founded?")
    assert r.situational_context[0].memory_id == mid
    assert "\n0001-01-01:\n" in r.prompt, r.prompt


async def test_pin_patch_history_delete(pcm_a: AsyncPcmClient) -> None:
    mid = await store(pcm_a, "Always run the linter before pushing.", pinned=True)
    r = await pcm_a.recall("anything about deployment windows")
    assert mid in ids(r.asker_context)

    changed = await pcm_a.update(mid, text="Always run linter and tests before pushing.")
    assert changed.version == 2
    hist = await pcm_a.history(mid)
    assert [v.version for v in hist.versions] == [1, 2]

    await pcm_a.delete(mid)
    with pytest.raises(NotFound):
        await pcm_a.get(mid)
    await settle(pcm_a)
    r = await pcm_a.recall("anything about deployment windows")
    assert mid not in ids(r.asker_context)


async def test_a_pin_is_not_repeated_as_an_episode_neighbour(pcm_a: AsyncPcmClient) -> None:
    at = "2024-09-02T10:0{}:00Z"
    ep = {"episode": "pin-neighbour"}
    pin = await store(
        pcm_a, "Never deploy billing on Fridays.", pinned=True, created_at=at.format(0), **ep
    )
    run = await store(pcm_a, "Rowed 2k in 7:41 on the erg.", created_at=at.format(1), **ep)
    body = await pcm_a.recall("How fast did I row 2k on the erg?")
    assert ids(body.situational_context)[:1] == [run]
    assert pin in ids(body.asker_context)
    assert pin not in ids(body.episode_context)
    assert body.prompt.count("Never deploy billing on Fridays.") == 1
    # Relevant, the pin is a situational item too, and still shown once in the prompt.
    body = await pcm_a.recall("Can we deploy billing on Fridays?")
    assert pin in ids(body.situational_context)
    assert body.prompt.count("Never deploy billing on Fridays.") == 1


async def test_pinned_rules_stay_in_their_scope(pcm_a: AsyncPcmClient) -> None:
    acme = {"workspace": "acme"}
    apollo = await store(
        pcm_a,
        "In project apollo never force-push to main.",
        pinned=True,
        scope="project",
        project="apollo",
        **acme,
    )
    zephyr = await store(
        pcm_a,
        "In project zephyr every deploy needs two approvals.",
        pinned=True,
        scope="project",
        project="zephyr",
        **acme,
    )
    house = await store(
        pcm_a,
        "At acme commit messages are written in English.",
        pinned=True,
        scope="workspace",
        **acme,
    )
    hana = await store(pcm_a, "Answer Hana in Japanese.", pinned=True, user_id="hana")
    await settle(pcm_a)  # the pinned cache is dropped by the change events

    async def asker(**where: str) -> set[str]:
        r = await pcm_a.recall("how should I ship this change?", **where)
        return set(ids(r.asker_context))

    got = await asker(project="zephyr", **acme)
    assert {zephyr, house} <= got and apollo not in got
    got = await asker(project="apollo", **acme)
    assert {apollo, house} <= got and zephyr not in got
    assert not {apollo, zephyr, house} & await asker()
    assert not {apollo, zephyr, house} & await asker(workspace="globex")
    assert hana in await asker(user_id="hana")
    assert hana not in await asker(user_id="kenji")
    # Pins stored for everyone reach a user's recall too (a team's guardrails).
    assert {zephyr, house} <= await asker(project="zephyr", user_id="kenji", **acme)


async def test_ops_endpoints(client_a: httpx.AsyncClient) -> None:
    assert (await client_a.get("/healthz")).json() == {"status": "ok"}
    ready = await client_a.get("/readyz")
    assert ready.status_code == 200, ready.text
    # The adapter holding the points, and whether strengths go through the Redis overlay.
    vectors = ready.json()["checks"]["vectors"]
    assert vectors["backend"] == "EdgeVectorStore" and vectors["strength_overlay"] is True
    # Which models answer: the embedded default has no reranker, and says how it ranks.
    models = ready.json()["checks"]["models"]
    assert models["embedding"] == "pcm-local/minilm-q8s"
    assert models["reranker"] == "none (hybrid rank fusion, cosine floor)"
    metrics = (await client_a.get("/metrics")).text
    assert "pcm_http_request_seconds" in metrics and "pcm_events_consumed_total" in metrics
    assert (await client_a.get("/openapi.json")).json()["paths"]["/v1/recall"]


async def test_compact_recall_returns_ten(pcm_a: AsyncPcmClient) -> None:
    """Compact mode is k=10 (DESIGN §3), whatever the default k."""
    await pcm_a.store_batch(
        {"text": f"Standup note {i}: the billing migration step {i} is done."} for i in range(14)
    )
    query = "Which billing migration steps are done?"
    got = (await pcm_a.recall(query, compact=True)).situational_context
    assert len(got) == 10
    full = await pcm_a.recall(query, compact=False)
    assert len(full.situational_context) > 10


async def test_demotion_archives_instead_of_deleting(pcm_a: AsyncPcmClient) -> None:
    weak = await store(
        pcm_a,
        "Gina once mentioned a cafe called Blue Fern near the old station.",
        importance="low",
        created_at="2023-01-01T12:00:00Z",
    )
    ran = await pcm_a.run_job("demotion", datetime.fromisoformat("2023-12-01T12:00:00Z"))
    assert ran.changed >= 1
    assert (await pcm_a.get(weak)).state == "archived"
    # A weak cue (cosine ~0.33) no longer reaches it; asking for archived memories does.
    vague = "Where could we grab a coffee?"
    then = "2023-12-02T00:00:00Z"
    r = await pcm_a.recall(vague, now=then)
    assert weak not in ids(r.situational_context)
    r = await pcm_a.recall(vague, now=then, include_archived=True)
    assert weak in ids(r.situational_context)
    # A strong cue reactivates it without asking (cue-dependent reactivation).
    r = await pcm_a.recall("Which cafe near the old station did Gina mention?", now=then)
    assert r.situational_context[0].memory_id == weak
    with pytest.raises(NotFound) as unknown:
        await pcm_a.run_job("nope")
    assert unknown.value.code == "unknown_job"
    ran = await pcm_a.run_job("demotion")  # no clock: run at the present time
    assert ran.job == "demotion", ran


async def test_in_batch_copies_are_repeats_and_names_keep_events_apart(
    pcm_a: AsyncPcmClient,
) -> None:
    text = "Picked up the prescription at QuickCare Pharmacy."
    out = await pcm_a.store_batch(
        [
            {"text": text, "created_at": "2024-02-01T10:00:00Z"},
            {"text": text, "created_at": "2024-03-01T10:00:00Z"},
        ]
    )
    first, second = out.results
    assert sent(second) == {"id": first.id, "status": "reinforced"}
    rec = await record(pcm_a, str(first.id))
    assert [d[:10] for d in rec["repeats"]] == ["2024-03-01"]
    other = await pcm_a.store("Picked up the prescription at Main Street Pharmacy.")
    assert other.status == "created" and other.id != first.id


async def test_in_batch_copies_in_other_scopes_or_of_other_users_stay_apart(
    pcm_a: AsyncPcmClient,
) -> None:
    """An exact copy in the same request is a repeat only in the same scope and of the same
    user, as a copy written later would be: two projects' identical notes are two facts."""
    text = "The release branch is frozen until the smoke tests pass."
    items: list[dict[str, Any]] = [
        {"text": text, "scope": "project", "workspace": "acme", "project": "api"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "web"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "api", "user_id": "u1"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "web"},
    ]
    api, web, mine, web_again = (await pcm_a.store_batch(items)).results
    assert [api.status, web.status, mine.status] == ["created"] * 3
    assert len({api.id, web.id, mine.id}) == 3
    assert sent(web_again) == {"id": web.id, "status": "reinforced"}
    for memory, project, user in ((api, "api", None), (web, "web", None), (mine, "api", "u1")):
        rec = await pcm_a.get(str(memory.id))
        assert (rec.project, rec.user_id) == (project, user)
    # Written again one at a time, each copy finds its own scope's memory.
    again = await pcm_a.store(**items[1])
    assert sent(again) == {"id": web.id, "status": "reinforced"}


async def test_same_text_of_two_users_stays_two_memories(pcm_a: AsyncPcmClient) -> None:
    """A repeat is a duplicate only for the same user: another user's identical note is
    theirs, and each user's recall finds their own."""
    text = "Parked the car on level 3, spot 118, at the airport garage."
    mine = {}
    for user in ("ana", "ben"):
        r = await pcm_a.store(text, user_id=user)
        assert r.status == "created", r
        mine[user] = r.id
    assert mine["ana"] != mine["ben"]
    again = await pcm_a.store(text, user_id="ben")
    assert sent(again) == {"id": mine["ben"], "status": "reinforced"}
    for user in ("ana", "ben"):
        found = await pcm_a.recall("Where did I park at the airport?", user_id=user)
        assert ids(found.situational_context)[:1] == [mine[user]]


async def test_a_users_recall_sees_shared_memories_but_no_other_users(
    pcm_a: AsyncPcmClient,
) -> None:
    """Stored without a user is stored for everyone: each user's recall finds it, as it
    finds their own; another user's memory stays theirs. Without a user, a recall sees the
    whole tenant."""
    shared = await store(pcm_a, "The Lisbon office kitchen closes at four on Fridays.")
    cleo = await store(pcm_a, "Cleo's Lisbon office desk is by the window.", user_id="cleo")
    dan = await store(pcm_a, "Dan's Lisbon office locker is number 42.", user_id="dan")

    async def found(**who: str) -> set[str]:
        out = await pcm_a.recall("What about the Lisbon office?", **who)
        return set(ids(out.situational_context))

    assert {shared, cleo} <= await found(user_id="cleo")
    assert dan not in await found(user_id="cleo")
    assert {shared, dan} <= await found(user_id="dan")
    assert cleo not in await found(user_id="dan")
    assert {shared, cleo, dan} <= await found()


async def test_created_before_keeps_newer_memories_out_of_every_slot(
    client_a: httpx.AsyncClient, pcm_a: AsyncPcmClient
) -> None:
    """The prompt hook stores a prompt dated T while it recalls with created_before=T: the
    memory made at T is in no slot (nor as an episode neighbour), an older one is."""
    older = await store(
        pcm_a,
        "The Oslo rack uses the blue patch cables.",
        created_at="2026-03-01T09:00:00Z",
        episode="oslo-rack",
    )
    at = "2026-03-01T09:05:00.123456Z"
    newer = await store(
        pcm_a, "The Oslo rack patch cables are blue ones.", created_at=at, episode="oslo-rack"
    )
    await settle(pcm_a)

    async def seen(**extra: str) -> set[str]:
        out = await pcm_a.recall("Which patch cables does the Oslo rack use?", **extra)
        return set(ids(out.situational_context + out.episode_context))

    assert {older, newer} <= await seen()
    before = await seen(created_before=at)
    assert older in before and newer not in before
    assert newer in await seen(created_before="2026-03-01T09:05:00.123457Z")
    # Not a date: a body the typed client would not send.
    bad = await client_a.post("/v1/recall", json={"query": "x", "created_before": "soon"})
    assert bad.status_code == 422


async def test_openapi_describes_the_store_result(client_a: httpx.AsyncClient) -> None:
    schema = (await client_a.get("/openapi.json")).json()["components"]["schemas"]
    result = schema["StoreResult"]
    assert set(result["properties"]) == {"id", "status", "reason", "salience"}
    assert "skipped" in result["properties"]["status"]["enum"]
    assert {"/v1/governance", "/v1/stats"} <= set(
        (await client_a.get("/openapi.json")).json()["paths"]
    )
