"""The HTTP contract end to end on real Redis, Qdrant Edge and the graph server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
from redis.asyncio import Redis

from pcm_common.runtime.http import MAX_BODY_BYTES
from tests.conftest import KEYS, NEO4J_URI, TEST_REDIS_URL, settle


async def store(client: httpx.AsyncClient, text: str, **extra: object) -> str:
    r = await client.post("/v1/memories", json={"text": text, **extra})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def test_paraphrase_recall_and_empty_result(client_a: httpx.AsyncClient) -> None:
    target = await store(client_a, "Alice moved to Berlin in March and now works at Siemens.")
    await store(client_a, "Bob's favourite programming language is Rust.")
    await store(client_a, "The team deploys on Fridays only after QA signs off.")

    r = await client_a.post("/v1/recall", json={"query": "Which city did Alice relocate to?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["situational_context"][0]["memory_id"] == target
    for header in ("[ANOMALY FLAGS — PAY ATTENTION]", "[ASKER CONTEXT]", "[SITUATIONAL CONTEXT]"):
        assert header in body["prompt"]
    assert body["empty"] is False

    r = await client_a.post("/v1/recall", json={"query": "how long to bake sourdough bread"})
    assert r.json()["empty"] is True
    assert "No relevant memories found" in r.json()["prompt"]


async def test_exact_duplicate_reinforces(client_a: httpx.AsyncClient) -> None:
    first = await client_a.post("/v1/memories", json={"text": "Carol prefers tea over coffee."})
    again = await client_a.post("/v1/memories", json={"text": "carol prefers  tea over coffee."})
    assert again.json() == {"id": first.json()["id"], "status": "reinforced"}
    rec = (await client_a.get(f"/v1/memories/{first.json()['id']}")).json()
    assert len(rec["repeats"]) == 1
    assert rec["strength"]["s_ref"] > 0.6


async def test_near_duplicate_merges_only_with_equal_figures(client_a: httpx.AsyncClient) -> None:
    a = await store(client_a, "Ran 5k in 27:10 this morning along the river.")
    b = await client_a.post(
        "/v1/memories", json={"text": "Ran 5k in 41:30 this morning along the river."}
    )
    assert b.json()["status"] == "created" and b.json()["id"] != a
    c = await client_a.post(
        "/v1/memories", json={"text": "Ran 5k in 27:10 this morning along the river!"}
    )
    assert c.json() == {"id": a, "status": "merged"}
    # The merged memory keeps its original date and records the repeat at the repeat's.
    rec = (await client_a.get(f"/v1/memories/{a}")).json()
    assert len(rec["repeats"]) == 1 and rec["repeats"][0] >= rec["created_at"]


async def test_a_near_duplicate_of_an_archived_memory_brings_it_back(
    client_a: httpx.AsyncClient,
) -> None:
    old = await store(client_a, "Cycled 42 km to Hollow Lake in 1:52 on the gravel road.")
    r = await client_a.patch(f"/v1/memories/{old}", json={"state": "archived"})
    assert r.status_code == 200 and r.json()["state"] == "archived"
    again = await client_a.post(
        "/v1/memories", json={"text": "Cycled 42 km to Hollow Lake in 1:52 on the gravel road!"}
    )
    assert again.json() == {"id": old, "status": "merged"}  # the same event, not a second one
    rec = (await client_a.get(f"/v1/memories/{old}")).json()
    assert rec["state"] == "active" and len(rec["repeats"]) == 1


async def test_near_duplicates_inside_one_batch_merge_as_one_at_a_time_would(
    client_a: httpx.AsyncClient,
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
    r = await client_a.post("/v1/memories:batch", json={"memories": items})
    assert r.status_code == 201, r.text
    got = r.json()["results"]
    assert [g["status"] for g in got] == ["created", "created", "merged", "created"]
    assert got[2]["id"] == got[0]["id"]  # the same figures: one event, stored once
    assert len({got[0]["id"], got[1]["id"], got[3]["id"]}) == 3  # other time, added name
    rec = (await client_a.get(f"/v1/memories/{got[0]['id']}")).json()
    assert rec["created_at"].startswith("2024-06-01")  # the original date stays
    assert [d[:10] for d in rec["repeats"]] == ["2024-06-03"]


async def test_importance_is_inferred_unless_given(client_a: httpx.AsyncClient) -> None:
    rule = await store(client_a, "Never merge to main without a green build.")
    chatter = await store(client_a, "haha ok, see ya!")
    plain = await store(client_a, "Ivan bought a green bicycle last week.")
    given = await store(
        client_a, "Never water the cactus more than once a month.", importance="low"
    )
    tiers = {}
    for mid in (rule, chatter, plain, given):
        rec = (await client_a.get(f"/v1/memories/{mid}")).json()
        tiers[mid] = (rec["importance"], rec["strength"]["s_ref"])
    assert tiers[rule] == ("high", 0.9)
    assert tiers[chatter] == ("low", 0.3)
    assert tiers[plain] == ("normal", 0.6)
    assert tiers[given] == ("low", 0.3)  # an explicit tier wins over the rules


async def test_memories_without_episode_are_grouped_by_time(client_a: httpx.AsyncClient) -> None:
    async def episode_of(mid: str) -> str | None:
        ep = (await client_a.get(f"/v1/memories/{mid}")).json()["episode"]
        return str(ep) if ep is not None else None

    me = {"user_id": "ep-kim"}
    a = await store(
        client_a, "Kim booked the venue for the offsite.", created_at="2024-02-01T09:00:00Z", **me
    )
    b = await store(
        client_a, "Kim ordered lunch for twelve people.", created_at="2024-02-01T09:40:00Z", **me
    )
    c = await store(
        client_a, "Kim's flight to Oslo leaves at noon.", created_at="2024-02-01T12:00:00Z", **me
    )
    other = await store(
        client_a,
        "Lee reviewed the offsite agenda.",
        created_at="2024-02-01T09:10:00Z",
        user_id="ep-lee",
    )
    named = await store(
        client_a,
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
    r = await client_a.post(
        "/v1/memories:batch",
        json={
            "memories": [
                {"text": f"Mo note {n}: {what}", "created_at": at, "user_id": "ep-mo"}
                for n, (what, at) in enumerate(
                    [
                        ("packed the tent", "2024-03-01T11:20:00Z"),
                        ("left home early", "2024-03-01T09:00:00Z"),
                        ("reached the lake", "2024-03-01T11:00:00Z"),
                        ("stopped for coffee", "2024-03-01T09:30:00Z"),
                    ]
                )
            ]
        },
    )
    assert r.status_code == 201, r.text
    eps = [await episode_of(x["id"]) for x in r.json()["results"]]
    assert eps[1] == eps[3] and eps[0] == eps[2] and eps[0] != eps[1]


async def test_write_firewall_blocks_secrets_and_redacts_pii(client_a: httpx.AsyncClient) -> None:
    async def count() -> int:
        return len((await client_a.get("/v1/memories", params={"limit": 500})).json()["items"])

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
    r = await client_a.post(
        "/v1/memories", json={"text": "Olga likes figs.", "user_id": "olga@example.com"}
    )
    assert r.status_code == 201 and r.json()["status"] == "created", r.text
    await client_a.delete(f"/v1/memories/{r.json()['id']}")

    r = await client_a.post("/v1/memories", json={"text": "Reach Olga at olga@example.com."})
    assert r.status_code == 201 and r.json()["status"] == "redacted"
    mid = r.json()["id"]
    rec = (await client_a.get(f"/v1/memories/{mid}")).json()
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
    assert (await client_a.get(f"/v1/memories/{mid}")).json()["version"] == rec["version"]


async def test_an_update_supersedes_the_old_fact(client_a: httpx.AsyncClient) -> None:
    me = {"user_id": "sup-ana"}
    old = await store(client_a, "Ana's team standup is at 9:30 every morning.", **me)
    await settle(client_a)
    new = await store(client_a, "Ana's team standup is now at 10:15 every morning.", **me)
    await settle(client_a)
    before = (await client_a.get(f"/v1/memories/{old}")).json()
    assert before["state"] == "superseded" and before["superseded_by"] == new
    assert (await client_a.get(f"/v1/memories/{new}")).json()["supersedes"] == old
    hist = (await client_a.get(f"/v1/memories/{old}/history")).json()
    assert hist["superseded_by"] == new and hist["versions"][-1]["text"].endswith(
        "9:30 every morning."
    )

    async def recalled(query: str) -> tuple[dict[str, dict[str, object]], str]:
        r = await client_a.post("/v1/recall", json={"query": query, **me})
        assert r.status_code == 200, r.text
        return {c["memory_id"]: c for c in r.json()["situational_context"]}, r.json()["prompt"]

    now, _ = await recalled("When is Ana's team standup?")
    assert new in now and old not in now
    past, prompt = await recalled("When was Ana's team standup before?")
    assert past[old]["superseded_by"] == new and new in past
    assert "(superseded) Ana's team standup is at 9:30" in prompt

    # A chain: a third update supersedes the second; deleting the middle one closes the
    # chain (the first stays superseded, now by the third), it does not revive 9:30.
    third = await store(client_a, "Ana's team standup is now at 11:00 every morning.", **me)
    await settle(client_a)
    assert (await client_a.get(f"/v1/memories/{new}")).json()["superseded_by"] == third
    assert (await client_a.delete(f"/v1/memories/{new}")).status_code == 204
    first = (await client_a.get(f"/v1/memories/{old}")).json()
    assert first["state"] == "superseded" and first["superseded_by"] == third
    assert (await client_a.get(f"/v1/memories/{third}")).json()["supersedes"] == old

    # Deleting the update makes the old fact current again.
    new = third
    assert (await client_a.delete(f"/v1/memories/{new}")).status_code == 204
    restored = (await client_a.get(f"/v1/memories/{old}")).json()
    assert restored["state"] == "active" and restored.get("superseded_by") is None


async def test_batch_and_created_at(client_a: httpx.AsyncClient) -> None:
    r = await client_a.post(
        "/v1/memories:batch",
        json={
            "memories": [
                {"text": "Dana adopted a beagle named Max.", "created_at": "2023-05-08T13:56:00"},
                {
                    "text": "Dana started a pottery class on Tuesdays.",
                    "created_at": "2023-05-09T10:00:00Z",
                },
            ]
        },
    )
    assert r.status_code == 201, r.text
    ids = [x["id"] for x in r.json()["results"]]
    rec = (await client_a.get(f"/v1/memories/{ids[0]}")).json()
    assert rec["created_at"].startswith("2023-05-08T13:56:00")
    listed = (await client_a.get("/v1/memories", params={"limit": 500})).json()["items"]
    assert set(ids) <= {m["id"] for m in listed}


async def test_pipeline_settles_and_graph_has_entities(client_a: httpx.AsyncClient) -> None:
    mid = await store(client_a, "Melanie visited Paris with her friend Caroline in June.")
    await settle(client_a)
    rec = (await client_a.get(f"/v1/memories/{mid}")).json()
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

    status = (await client_a.get("/v1/pipeline")).json()
    assert status["pending"] == 0 and status["indexing"] is False
    # Redis agrees with /v1/pipeline: no consumer group holds pending entries.
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        for stream in ("pcm.memory.written", "pcm.memory.extracted"):
            for group in await redis.xinfo_groups(stream):
                assert group["pending"] == 0 and group["lag"] == 0, group
    finally:
        await redis.aclose()


async def test_recall_reinforces_off_the_request_path(client_a: httpx.AsyncClient) -> None:
    mid = await store(
        client_a,
        "Erin's dentist appointment is on the 14th at 9am.",
        created_at="2024-01-01T09:00:00Z",
    )
    before = (await client_a.get(f"/v1/memories/{mid}")).json()["strength"]
    r = await client_a.post(
        "/v1/recall",
        json={"query": "When is Erin's dentist appointment?", "now": "2024-01-10T09:00:00Z"},
    )
    assert r.json()["situational_context"][0]["memory_id"] == mid
    await settle(client_a)
    after = (await client_a.get(f"/v1/memories/{mid}")).json()["strength"]
    assert after["n"] == before["n"] + 1
    assert after["last_recalled_at"].startswith("2024-01-10")


async def test_bad_input_is_rejected_and_changes_nothing(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient, pcm_url: str
) -> None:
    count = len((await client_a.get("/v1/memories", params={"limit": 500})).json()["items"])
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
    assert len((await client_a.get("/v1/memories", params={"limit": 500})).json()["items"]) == count

    # Another tenant's memory id: not found, and untouched by patch or delete.
    mid = await store(client_a, "Frank keeps his spare key under the blue flowerpot.")
    assert (await client_b.get(f"/v1/memories/{mid}")).status_code == 404
    assert (await client_b.patch(f"/v1/memories/{mid}", json={"pinned": True})).status_code == 404
    assert (await client_b.delete(f"/v1/memories/{mid}")).status_code == 404
    rec = (await client_a.get(f"/v1/memories/{mid}")).json()
    assert rec["pinned"] is False
    r = await client_b.post("/v1/recall", json={"query": "Where is Frank's spare key?"})
    assert all(c["memory_id"] != mid for c in r.json()["situational_context"])


async def test_inputs_that_would_break_the_store_or_widen_a_recall_are_refused(
    client_a: httpx.AsyncClient, pcm_url: str
) -> None:
    """What a hostile client tried against `make run`: each gets a clear 4xx, nothing is
    stored, and the tenant keeps working."""
    count = len((await client_a.get("/v1/memories", params={"limit": 500})).json()["items"])
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(199):
        deep = {"a": deep}
    # 200 levels were stored, and every later read of the tenant failed in the engine.
    r = await client_a.post("/v1/memories", json={"text": "Deep meta probe", "metadata": deep})
    assert r.status_code == 422 and "nested deeper" in r.text, r.text
    ok = {"leaf": 1}
    for _ in range(15):
        ok = {"a": ok}  # type: ignore[dict-item]
    kept = await store(client_a, "Metadata sixteen levels deep is fine.", metadata=ok)
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
    assert (
        len((await client_a.get("/v1/memories", params={"limit": 500})).json()["items"])
        == count + 1
    )
    # The tenant still reads and writes, the kept memory with its metadata.
    assert (await client_a.get(f"/v1/memories/{kept}")).json()["metadata"] == ok

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


async def test_parallel_copies_make_one_memory(client_a: httpx.AsyncClient) -> None:
    """The same text sent 20 times at once (retries, parallel agents): one memory, every
    other write a repeat of it, each repeat recorded; a batch racing them joins too."""
    text = f"The coffee machine on floor {uuid.uuid4().hex[:6]} is descaled every Monday."
    item = {"text": text, "project": "conc"}
    singles = [client_a.post("/v1/memories", json=item) for _ in range(20)]
    batch = client_a.post("/v1/memories:batch", json={"memories": [item] * 5})
    answers = await asyncio.gather(*singles, batch)
    results = [r.json() for r in answers[:-1]] + answers[-1].json()["results"]
    assert len({r["id"] for r in results}) == 1, results
    statuses = sorted(r["status"] for r in results)
    assert statuses == ["created"] + ["reinforced"] * 24, statuses
    rec = (await client_a.get(f"/v1/memories/{results[0]['id']}")).json()
    assert len(rec["repeats"]) == 24 and rec["scope"] == "project"


async def test_a_patch_racing_a_delete_does_not_bring_it_back(
    client_a: httpx.AsyncClient,
) -> None:
    for n in range(5):
        mid = await store(client_a, f"Resurrection probe {n}: the spare router sits in bay {n}.")
        patch = client_a.patch(f"/v1/memories/{mid}", json={"text": f"Probe {n} edited."})
        gone = client_a.delete(f"/v1/memories/{mid}")
        p, d = await asyncio.gather(patch, gone)
        assert d.status_code == 204 and p.status_code in (200, 404), (p.text, d.text)
        assert (await client_a.get(f"/v1/memories/{mid}")).status_code == 404


async def test_a_write_naming_a_project_is_that_projects(client_a: httpx.AsyncClient) -> None:
    """Without `scope`, the narrowest scope the write names; another project never sees it."""
    mid = await store(client_a, "Project zeta uses Postgres 16 for the ledger.", project="zeta")
    rec = (await client_a.get(f"/v1/memories/{mid}")).json()
    assert (rec["scope"], rec["project"]) == ("project", "zeta")
    ws = await store(client_a, "Workspace w1 meets on Tuesdays.", workspace="w1")
    assert (await client_a.get(f"/v1/memories/{ws}")).json()["scope"] == "workspace"
    body = {"query": "Which database does zeta use?", "project": "other"}
    got = (await client_a.post("/v1/recall", json=body)).json()["situational_context"]
    assert mid not in [c["memory_id"] for c in got]
    got = (await client_a.post("/v1/recall", json={**body, "project": "zeta"})).json()
    assert got["situational_context"][0]["memory_id"] == mid


async def test_a_recall_cannot_reinforce_in_the_future(client_a: httpx.AsyncClient) -> None:
    mid = await store(client_a, "The standup is at 9:30 in room Birch.")
    before = (await client_a.get(f"/v1/memories/{mid}")).json()
    r = await client_a.post(
        "/v1/recall", json={"query": "When is the standup?", "now": "9999-12-31T23:59:59Z"}
    )
    assert r.status_code == 422 and "now" in r.text, r.text
    await settle(client_a)
    after = (await client_a.get(f"/v1/memories/{mid}")).json()
    assert after["strength"] == before["strength"]


async def test_year_one_renders_as_an_iso_date(client_a: httpx.AsyncClient) -> None:
    mid = await store(
        client_a,
        "The Quillfeather archive was founded in year one.",
        created_at="0001-01-01T00:00:00Z",
    )
    r = await client_a.post(
        "/v1/recall", json={"query": "When was the Quillfeather archive founded?"}
    )
    assert r.json()["situational_context"][0]["memory_id"] == mid
    assert "\n0001-01-01:\n" in r.json()["prompt"], r.json()["prompt"]


async def test_pin_patch_history_delete(client_a: httpx.AsyncClient) -> None:
    mid = await store(client_a, "Always run the linter before pushing.", pinned=True)
    r = await client_a.post("/v1/recall", json={"query": "anything about deployment windows"})
    assert any(a["memory_id"] == mid for a in r.json()["asker_context"])

    r = await client_a.patch(
        f"/v1/memories/{mid}", json={"text": "Always run linter and tests before pushing."}
    )
    assert r.status_code == 200 and r.json()["version"] == 2
    hist = (await client_a.get(f"/v1/memories/{mid}/history")).json()
    assert [v["version"] for v in hist["versions"]] == [1, 2]

    assert (await client_a.delete(f"/v1/memories/{mid}")).status_code == 204
    assert (await client_a.get(f"/v1/memories/{mid}")).status_code == 404
    await settle(client_a)
    r = await client_a.post("/v1/recall", json={"query": "anything about deployment windows"})
    assert all(a["memory_id"] != mid for a in r.json()["asker_context"])


async def test_a_pin_is_not_repeated_as_an_episode_neighbour(client_a: httpx.AsyncClient) -> None:
    at = "2024-09-02T10:0{}:00Z"
    ep = {"episode": "pin-neighbour"}
    pin = await store(
        client_a, "Never deploy billing on Fridays.", pinned=True, created_at=at.format(0), **ep
    )
    run = await store(client_a, "Rowed 2k in 7:41 on the erg.", created_at=at.format(1), **ep)
    r = await client_a.post("/v1/recall", json={"query": "How fast did I row 2k on the erg?"})
    body = r.json()
    assert [c["memory_id"] for c in body["situational_context"]][:1] == [run]
    assert pin in {a["memory_id"] for a in body["asker_context"]}
    assert pin not in {e["memory_id"] for e in body["episode_context"]}
    assert body["prompt"].count("Never deploy billing on Fridays.") == 1
    # Relevant, the pin is a situational item too, and still shown once in the prompt.
    r = await client_a.post("/v1/recall", json={"query": "Can we deploy billing on Fridays?"})
    body = r.json()
    assert pin in {c["memory_id"] for c in body["situational_context"]}
    assert body["prompt"].count("Never deploy billing on Fridays.") == 1


async def test_pinned_rules_stay_in_their_scope(client_a: httpx.AsyncClient) -> None:
    acme = {"workspace": "acme"}
    apollo = await store(
        client_a,
        "In project apollo never force-push to main.",
        pinned=True,
        scope="project",
        project="apollo",
        **acme,
    )
    zephyr = await store(
        client_a,
        "In project zephyr every deploy needs two approvals.",
        pinned=True,
        scope="project",
        project="zephyr",
        **acme,
    )
    house = await store(
        client_a,
        "At acme commit messages are written in English.",
        pinned=True,
        scope="workspace",
        **acme,
    )
    hana = await store(client_a, "Answer Hana in Japanese.", pinned=True, user_id="hana")
    await settle(client_a)  # the pinned cache is dropped by the change events

    async def asker(**where: str) -> set[str]:
        body = {"query": "how should I ship this change?", **where}
        r = await client_a.post("/v1/recall", json=body)
        assert r.status_code == 200, r.text
        return {a["memory_id"] for a in r.json()["asker_context"]}

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


async def test_compact_recall_returns_ten(client_a: httpx.AsyncClient) -> None:
    """Compact mode is k=10 (DESIGN §3), whatever the default k."""
    batch = [
        {"text": f"Standup note {i}: the billing migration step {i} is done."} for i in range(14)
    ]
    r = await client_a.post("/v1/memories:batch", json={"memories": batch})
    assert r.status_code == 201, r.text
    body = {"query": "Which billing migration steps are done?", "compact": True}
    got = (await client_a.post("/v1/recall", json=body)).json()["situational_context"]
    assert len(got) == 10
    full = (await client_a.post("/v1/recall", json={**body, "compact": False})).json()
    assert len(full["situational_context"]) > 10


async def test_demotion_archives_instead_of_deleting(client_a: httpx.AsyncClient) -> None:
    weak = await store(
        client_a,
        "Gina once mentioned a cafe called Blue Fern near the old station.",
        importance="low",
        created_at="2023-01-01T12:00:00Z",
    )
    r = await client_a.post("/v1/jobs/demotion", json={"now": "2023-12-01T12:00:00Z"})
    assert r.status_code == 200 and r.json()["changed"] >= 1
    assert (await client_a.get(f"/v1/memories/{weak}")).json()["state"] == "archived"
    # A weak cue (cosine ~0.33) no longer reaches it; asking for archived memories does.
    vague = {"query": "Where could we grab a coffee?", "now": "2023-12-02T00:00:00Z"}
    r = await client_a.post("/v1/recall", json=vague)
    assert all(c["memory_id"] != weak for c in r.json()["situational_context"])
    r = await client_a.post("/v1/recall", json={**vague, "include_archived": True})
    assert weak in [c["memory_id"] for c in r.json()["situational_context"]]
    # A strong cue reactivates it without asking (cue-dependent reactivation).
    strong = {"query": "Which cafe near the old station did Gina mention?"}
    r = await client_a.post("/v1/recall", json={**strong, "now": "2023-12-02T00:00:00Z"})
    assert r.json()["situational_context"][0]["memory_id"] == weak
    assert (await client_a.post("/v1/jobs/nope", json={})).status_code == 404
    r = await client_a.post("/v1/jobs/demotion")  # no body: run at the present time
    assert r.status_code == 200 and r.json()["job"] == "demotion", r.text


async def test_in_batch_copies_are_repeats_and_names_keep_events_apart(
    client_a: httpx.AsyncClient,
) -> None:
    r = await client_a.post(
        "/v1/memories:batch",
        json={
            "memories": [
                {
                    "text": "Picked up the prescription at QuickCare Pharmacy.",
                    "created_at": "2024-02-01T10:00:00Z",
                },
                {
                    "text": "Picked up the prescription at QuickCare Pharmacy.",
                    "created_at": "2024-03-01T10:00:00Z",
                },
            ]
        },
    )
    first, second = r.json()["results"]
    assert second == {"id": first["id"], "status": "reinforced"}
    rec = (await client_a.get(f"/v1/memories/{first['id']}")).json()
    assert [d[:10] for d in rec["repeats"]] == ["2024-03-01"]
    other = await client_a.post(
        "/v1/memories", json={"text": "Picked up the prescription at Main Street Pharmacy."}
    )
    assert other.json()["status"] == "created" and other.json()["id"] != first["id"]


async def test_in_batch_copies_in_other_scopes_or_of_other_users_stay_apart(
    client_a: httpx.AsyncClient,
) -> None:
    """An exact copy in the same request is a repeat only in the same scope and of the same
    user, as a copy written later would be: two projects' identical notes are two facts."""
    text = "The release branch is frozen until the smoke tests pass."
    items = [
        {"text": text, "scope": "project", "workspace": "acme", "project": "api"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "web"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "api", "user_id": "u1"},
        {"text": text, "scope": "project", "workspace": "acme", "project": "web"},
    ]
    r = await client_a.post("/v1/memories:batch", json={"memories": items})
    assert r.status_code == 201, r.text
    api, web, mine, web_again = r.json()["results"]
    assert [api["status"], web["status"], mine["status"]] == ["created"] * 3
    assert len({api["id"], web["id"], mine["id"]}) == 3
    assert web_again == {"id": web["id"], "status": "reinforced"}
    for memory, project, user in ((api, "api", None), (web, "web", None), (mine, "api", "u1")):
        rec = (await client_a.get(f"/v1/memories/{memory['id']}")).json()
        assert (rec["project"], rec.get("user_id")) == (project, user)
    # Written again one at a time, each copy finds its own scope's memory.
    again = await client_a.post("/v1/memories", json=items[1])
    assert again.json() == {"id": web["id"], "status": "reinforced"}


async def test_same_text_of_two_users_stays_two_memories(client_a: httpx.AsyncClient) -> None:
    """A repeat is a duplicate only for the same user: another user's identical note is
    theirs, and each user's recall finds their own."""
    text = "Parked the car on level 3, spot 118, at the airport garage."
    ids = {}
    for user in ("ana", "ben"):
        r = await client_a.post("/v1/memories", json={"text": text, "user_id": user})
        assert r.status_code == 201 and r.json()["status"] == "created", r.text
        ids[user] = r.json()["id"]
    assert ids["ana"] != ids["ben"]
    again = await client_a.post("/v1/memories", json={"text": text, "user_id": "ben"})
    assert again.json() == {"id": ids["ben"], "status": "reinforced"}
    for user in ("ana", "ben"):
        body = {"query": "Where did I park at the airport?", "user_id": user}
        found = [
            c["memory_id"]
            for c in (await client_a.post("/v1/recall", json=body)).json()["situational_context"]
        ]
        assert found[:1] == [ids[user]]


async def test_a_users_recall_sees_shared_memories_but_no_other_users(
    client_a: httpx.AsyncClient,
) -> None:
    """Stored without a user is stored for everyone: each user's recall finds it, as it
    finds their own; another user's memory stays theirs. Without a user, a recall sees the
    whole tenant."""
    shared = await store(client_a, "The Lisbon office kitchen closes at four on Fridays.")
    cleo = await store(client_a, "Cleo's Lisbon office desk is by the window.", user_id="cleo")
    dan = await store(client_a, "Dan's Lisbon office locker is number 42.", user_id="dan")

    async def found(**who: str) -> set[str]:
        body = {"query": "What about the Lisbon office?", **who}
        out = (await client_a.post("/v1/recall", json=body)).json()
        return {c["memory_id"] for c in out["situational_context"]}

    assert {shared, cleo} <= await found(user_id="cleo")
    assert dan not in await found(user_id="cleo")
    assert {shared, dan} <= await found(user_id="dan")
    assert cleo not in await found(user_id="dan")
    assert {shared, cleo, dan} <= await found()


async def test_created_before_keeps_newer_memories_out_of_every_slot(
    client_a: httpx.AsyncClient,
) -> None:
    """The prompt hook stores a prompt dated T while it recalls with created_before=T: the
    memory made at T is in no slot (nor as an episode neighbour), an older one is."""
    older = await store(
        client_a,
        "The Oslo rack uses the blue patch cables.",
        created_at="2026-03-01T09:00:00Z",
        episode="oslo-rack",
    )
    at = "2026-03-01T09:05:00.123456Z"
    newer = await store(
        client_a, "The Oslo rack patch cables are blue ones.", created_at=at, episode="oslo-rack"
    )
    await settle(client_a)

    async def seen(**extra: str) -> set[str]:
        body = {"query": "Which patch cables does the Oslo rack use?", **extra}
        r = await client_a.post("/v1/recall", json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        return {c["memory_id"] for c in out["situational_context"] + out["episode_context"]}

    assert {older, newer} <= await seen()
    before = await seen(created_before=at)
    assert older in before and newer not in before
    assert newer in await seen(created_before="2026-03-01T09:05:00.123457Z")
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
