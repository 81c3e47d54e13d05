"""The inspector's routes and its page, over HTTP on the real server: search reinforces
nothing, strength and graph answer for the key's tenant only, a dead letter is sent back
once and by its own tenant only, and /ui is served with a policy that lets nothing in
from elsewhere."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from redis.asyncio import Redis

from pcm_common.domain.strength import DEMOTE_BELOW
from pcm_common.messaging.events import STREAM_CHANGED, STREAM_DLQ, DeadLetter
from pcm_common.messaging.stream_batches import decode_entry
from pcm_recall.settings import RecallSettings
from tests.conftest import KEYS, RUN, TEST_REDIS_URL, settle
from tests.inspector_data import SURPRISE, seed_dead_letter, seed_routines

TEXTS = [
    f"Ines Carvalho works at Quillfeather Studio in Porto. ({RUN})",
    f"Ines Carvalho moved to Porto in June. ({RUN})",
]


async def _store(client: httpx.AsyncClient) -> list[str]:
    got = await client.post("/v1/memories:batch", json={"memories": [{"text": t} for t in TEXTS]})
    assert got.status_code == 201, got.text
    await settle(client)
    return [r["id"] for r in got.json()["results"]]


async def test_search_ranks_by_meaning_and_reinforces_nothing(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    ids = await _store(client_a)
    before = (await client_a.get(f"/v1/memories/{ids[0]}")).json()["strength"]
    got = await client_a.get(
        "/v1/memories:search", params={"q": "Which company does Ines work for?"}
    )
    assert got.status_code == 200, got.text
    assert got.json()["items"][0]["id"] == ids[0]
    await settle(client_a)
    after = (await client_a.get(f"/v1/memories/{ids[0]}")).json()["strength"]
    assert after == before  # a recall would have reinforced it
    other = await client_b.get(
        "/v1/memories:search", params={"q": "Ines Carvalho works at Quillfeather Studio"}
    )
    assert ids[0] not in {m["id"] for m in other.json()["items"]}
    for bad in ({"q": "  "}, {"q": "x", "limit": "0"}, {"q": "x", "state": "lost"}):
        assert (await client_a.get("/v1/memories:search", params=bad)).status_code == 422


async def test_strength_view_of_a_new_memory(client_a: httpx.AsyncClient) -> None:
    ids = await _store(client_a)
    got = await client_a.get(f"/v1/memories/{ids[1]}/strength")
    assert got.status_code == 200, got.text
    view = got.json()
    assert view["threshold"] == DEMOTE_BELOW and not view["pinned"]
    assert view["events"][0]["kind"] == "created"
    assert view["curve"][-1]["strength"] <= DEMOTE_BELOW + 1e-6
    crosses = datetime.fromisoformat(view["crosses_threshold_at"])
    assert crosses > datetime.now(UTC) + timedelta(days=7)
    far = (datetime.now(UTC) + timedelta(days=400)).isoformat()
    assert (
        await client_a.get(f"/v1/memories/{ids[1]}/strength", params={"now": far})
    ).status_code == 422


async def test_graph_neighbourhood_links_memories_by_entity(client_a: httpx.AsyncClient) -> None:
    ids = await _store(client_a)
    got = await client_a.get(f"/v1/memories/{ids[0]}/graph")
    assert got.status_code == 200, got.text
    graph = got.json()
    own = {e["key"] for e in graph["entities"]}
    assert {"quillfeather studio", "porto"} <= own
    linked = {m["id"]: m for m in graph["memories"]}
    assert ids[1] in linked and ids[0] not in linked
    assert "porto" in linked[ids[1]]["shares"] and set(linked[ids[1]]["shares"]) <= own
    assert linked[ids[1]]["text"] == TEXTS[1]


async def test_another_tenants_memory_is_not_found(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    ids = await _store(client_a)
    for route in ("strength", "graph"):
        got = await client_b.get(f"/v1/memories/{ids[0]}/{route}")
        assert got.status_code == 404 and got.json()["error"] == "memory_not_found"
        assert "Ines" not in got.text
        bad = await client_a.get(f"/v1/memories/not-an-id/{route}")
        assert bad.status_code == 404 and bad.json()["error"] == "memory_not_found"


async def test_the_page_is_served_under_a_strict_policy(pcm_url: str) -> None:
    async with httpx.AsyncClient(base_url=pcm_url) as web:
        root = await web.get("/ui")
        assert root.status_code == 307 and root.headers["location"] == "/ui/"
        for path in ("/ui/", "/ui/memories/any-id", "/ui/recall"):
            page = await web.get(path)
            assert page.status_code == 200 and "PCM inspector" in page.text
            assert "default-src 'self'" in page.headers["content-security-policy"]
        for asset in ("app.js", "vendor/uPlot.iife.min.js", "vendor/cytoscape.min.js"):
            assert (await web.get(f"/ui/static/{asset}")).status_code == 200
        assert (await web.get("/ui/static/nothing.js")).status_code == 404


async def test_attention_lists_routines_stopped_ones_and_surprises(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    user = f"attention-{RUN}"
    await seed_routines(client_a, user)
    listed = await client_a.get("/v1/memories", params={"user_id": user, "limit": 500})
    mine = {m["id"] for m in listed.json()["items"]}
    got = await client_a.get("/v1/attention")
    assert got.status_code == 200, got.text
    view = got.json()
    # (The tenant's other users may have routines of the same wording: only this user's.)
    view["routines"] = [r for r in view["routines"] if r["last_memory"]["id"] in mine]
    piano = [r for r in view["routines"] if "piano lesson" in r["last_memory"]["text"]]
    assert [r["state"] for r in piano] == ["stopped"], view["routines"]
    assert piano[0]["usual_interval_days"] == pytest.approx(7.0, abs=0.1)
    swims = [r for r in view["routines"] if "Eastside pool" in r["last_memory"]["text"]]
    assert [r["state"] for r in swims] == ["regular"]
    assert SURPRISE in {s["text"] for s in view["surprises"]}
    # Another tenant sees none of it.
    other = (await client_b.get("/v1/attention")).json()
    assert not [r for r in other["routines"] if "piano" in r["last_memory"]["text"]]
    assert SURPRISE not in {s["text"] for s in other["surprises"]}


async def test_listing_filters_on_source_importance_time_and_flags(
    client_a: httpx.AsyncClient,
) -> None:
    user = f"filters-{RUN}"
    at = datetime(2025, 3, 10, 12, tzinfo=UTC)
    items = [
        {"text": f"Filed the quarterly VAT return. ({RUN})", "source": "mcp", "created_at": at},
        {
            "text": f"Booked the dentist for Tuesday. ({RUN})",
            "importance": "high",
            "episode": f"errands-{RUN}",
        },
    ]
    for item in items:
        body = {**item, "user_id": user}
        if "created_at" in body:
            body["created_at"] = at.isoformat()
        assert (await client_a.post("/v1/memories", json=body)).status_code == 201

    async def texts(**params: str) -> list[str]:
        got = await client_a.get("/v1/memories", params={"user_id": user, **params})
        assert got.status_code == 200, got.text
        return [m["text"] for m in got.json()["items"]]

    vat, dentist = (i["text"] for i in items)
    assert await texts(source="mcp") == [vat]
    assert await texts(importance="high") == [dentist]
    day = timedelta(days=1)
    assert await texts(created_before=(at + day).isoformat()) == [vat]
    assert await texts(created_after=(at + day).isoformat()) == [dentist]
    assert await texts(created_after=at.isoformat(), created_before=(at + day).isoformat()) == [vat]
    assert await texts(created_before=at.isoformat()) == []  # strictly before
    assert await texts(flagged="true") == []
    assert await texts(episode=f"errands-{RUN}") == [dentist]
    found = await client_a.get(
        "/v1/memories:search", params={"q": "tax return", "user_id": user, "source": "mcp"}
    )
    assert [m["text"] for m in found.json()["items"]] == [vat]
    assert (await client_a.get("/v1/memories", params={"source": "fax"})).status_code == 422


async def test_a_listing_cursor_walks_every_page_once(client_a: httpx.AsyncClient) -> None:
    """The inspector's pages follow `next_offset`: walked past the first pages, every
    memory comes once, none is skipped, and writes made mid-walk repeat or drop nothing
    (the whole walk at 100k memories: `bench.inspector`)."""
    user = f"walk-{RUN}"
    texts = [f"Walk note {i}: shelf {i * 3} holds box {i + 11}. ({RUN})" for i in range(45)]
    got = await client_a.post(
        "/v1/memories:batch", json={"memories": [{"text": t, "user_id": user} for t in texts]}
    )
    assert got.status_code == 201, got.text
    stored = {r["id"] for r in got.json()["results"]}
    assert len(stored) == len(texts)
    seen: list[str] = []
    added: set[str] = set()
    offset: str | None = None
    pages = 0
    while True:
        params = {"user_id": user, "limit": 7, **({"offset": offset} if offset else {})}
        page = await client_a.get("/v1/memories", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert 0 < len(body["items"]) <= 7
        seen += [m["id"] for m in body["items"]]
        pages += 1
        if pages == 3:  # written mid-walk: new ids may come or not, old ones stay once
            late = [{"text": f"Late note {i}. ({RUN})", "user_id": user} for i in range(5)]
            more = await client_a.post("/v1/memories:batch", json={"memories": late})
            assert more.status_code == 201, more.text
            added = {r["id"] for r in more.json()["results"]}
        offset = body["next_offset"]
        if not offset:
            break
    assert pages >= 7
    assert len(seen) == len(set(seen))  # no repeats
    assert stored <= set(seen)  # no gaps
    assert set(seen) <= stored | added
    total = (await client_a.get("/v1/stats", params={"user_id": user})).json()["memories"]
    assert total == len(stored) + len(added)


async def test_dead_letters_are_the_tenants_own(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        for tenant, mid in ((KEYS["key-a"], f"a-{RUN}"), (KEYS["key-b"], f"b-{RUN}")):
            letter = DeadLetter(
                stream="pcm.memory.written",
                group="graph-extractor",
                entry_id="1-0",
                error="RuntimeError('extractor failed')",
                deliveries=5,
                body={"tenant": tenant, "memory_id": mid},
            )
            await redis.xadd(STREAM_DLQ, {"data": letter.model_dump_json()})
        await redis.xadd(STREAM_DLQ, {"data": "not json"})  # ignored, never a 500
    finally:
        await redis.aclose()
    got = await client_a.get("/v1/dead-letters")
    assert got.status_code == 200, got.text
    mine = [d["memory_id"] for d in got.json()["items"]]
    assert f"a-{RUN}" in mine and f"b-{RUN}" not in mine
    theirs = [d["memory_id"] for d in (await client_b.get("/v1/dead-letters")).json()["items"]]
    assert f"b-{RUN}" in theirs and f"a-{RUN}" not in theirs
    assert (await client_a.get("/v1/dead-letters", params={"limit": 0})).status_code == 422


async def test_a_dead_letter_is_retried_once_by_its_own_tenant(
    client_a: httpx.AsyncClient, client_b: httpx.AsyncClient
) -> None:
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        letter_id, body = await seed_dead_letter(redis, KEYS["key-a"])
        route = f"/v1/dead-letters/{letter_id}:retry"
        # Another tenant's letter is not found, and stays where it is.
        refused = await client_b.post(route)
        assert refused.status_code == 404, refused.text
        assert refused.json()["error"] == "dead_letter_not_found"
        assert await redis.xrange(STREAM_DLQ, letter_id, letter_id)

        got = await client_a.post(route)
        assert got.status_code == 200, got.text
        done = got.json()
        assert done["id"] == letter_id and done["stream"] == STREAM_CHANGED
        assert done["memory_id"] == body["memory_id"]
        # The event is back on its stream as it was, in the envelope the bus writes.
        ((_, fields),) = await redis.xrange(
            STREAM_CHANGED, done["published_id"], done["published_id"]
        )
        assert decode_entry(fields) == body
        # And the letter is gone: listed no more, and a second retry publishes nothing.
        listed = (await client_a.get("/v1/dead-letters")).json()["items"]
        assert letter_id not in {d["id"] for d in listed}
        length = await redis.xlen(STREAM_CHANGED)
        again = await client_a.post(route)
        assert again.status_code == 404 and again.json()["error"] == "dead_letter_not_found"
        assert await redis.xlen(STREAM_CHANGED) == length

        # Two retries at once (a double click): one publishes, the other finds nothing.
        letter_id, _ = await seed_dead_letter(redis, KEYS["key-a"])
        length = await redis.xlen(STREAM_CHANGED)
        both = await asyncio.gather(
            *(client_a.post(f"/v1/dead-letters/{letter_id}:retry") for _ in range(2))
        )
        assert sorted(r.status_code for r in both) == [200, 404]
        assert await redis.xlen(STREAM_CHANGED) == length + 1

        for bad in ("not-an-id", "0-0", "99999999999999-0", f"{2**64}-0", "1-2-3"):
            gone = await client_a.post(f"/v1/dead-letters/{bad}:retry")
            assert gone.status_code == 404, (bad, gone.text)
        await settle(client_a)  # the consumers take the event again without failing
        assert not [
            d
            for d in (await client_a.get("/v1/dead-letters")).json()["items"]
            if d["memory_id"] == body["memory_id"]
        ]
    finally:
        await redis.aclose()


async def test_recall_explains_each_candidates_score(client_a: httpx.AsyncClient) -> None:
    """`explain: true` (the playground's recall): each ranked item carries the terms of its
    score, and they add up to it; a project memory has the project's scope bonus, a global
    one none; a memory the graph links to the query has its link."""
    project = f"explain-{RUN}"
    texts = [
        f"Tomasz Wielgosz repairs harpsichords at the Brzozowa workshop. ({RUN})",
        f"The Brzozowa workshop closes at noon on Saturdays. ({RUN})",
    ]
    # Enough other memories that an entity two of them name is rare (the graph links only
    # entities in at most 5 % of the tenant's memories).
    notes = [{"text": f"Garden log {i}: watered the tomato bed. ({RUN})"} for i in range(40)]
    assert (await client_a.post("/v1/memories:batch", json={"memories": notes})).status_code == 201
    mine = await client_a.post("/v1/memories", json={"text": texts[0], "project": project})
    everyone = await client_a.post("/v1/memories", json={"text": texts[1]})
    assert mine.status_code == everyone.status_code == 201
    await settle(client_a)
    query = {"query": "What does Tomasz Wielgosz do at the Brzozowa workshop?", "k": 5}
    got = await client_a.post("/v1/recall", json={**query, "project": project, "explain": True})
    assert got.status_code == 200, got.text
    out = got.json()
    items = {c["memory_id"]: c for c in out["situational_context"]}
    assert {mine.json()["id"], everyone.json()["id"]} <= set(items)
    settings = RecallSettings()
    for c in items.values():
        t = c["terms"]
        parts = t["relevance_term"] + t["link_term"] + t["scope_bonus"]
        assert abs(parts + t["state_bonus"] + t["feedback"] - c["score"]) < 1e-5
        assert t["score"] == c["score"] and t["relevance"] == c["relevance"]
        assert abs(t["link_term"] - settings.graph_link_weight * t["graph_link"]) < 1e-5
        assert t["reactivated"] >= t["strength"]
    assert items[mine.json()["id"]]["terms"]["scope_bonus"] == settings.scope_bonus_project
    assert items[everyone.json()["id"]]["terms"]["scope_bonus"] == 0.0
    # The graph found the query's entities: the memories it linked carry their link.
    assert out["timings_ms"]["graph_links"] > 0
    assert any(c["terms"]["graph_link"] > 0 for c in items.values())
    # Items not ranked against the query have no terms; without `explain`, none has.
    assert all(c["terms"] is None for c in out["episode_context"] + out["asker_context"])
    plain = (await client_a.post("/v1/recall", json={**query, "project": project})).json()
    assert all(c["terms"] is None for c in plain["situational_context"])
    bad = await client_a.post("/v1/recall", json={**query, "explain": "very"})
    assert bad.status_code == 422


async def test_a_listing_counts_every_match_of_its_filters(client_a: httpx.AsyncClient) -> None:
    """`count=true` answers the count of every memory the filters match, all pages
    together, as the listing walked to its end finds them; a search counts what the same
    filters let it rank."""
    user = f"count-{RUN}"
    notes = [
        {"text": f"Count note {i}: crate {i * 7} goes to bay {i % 4}. ({RUN})", "user_id": user}
        | ({"importance": "high"} if i % 3 == 0 else {})
        for i in range(17)
    ]
    got = await client_a.post("/v1/memories:batch", json={"memories": notes})
    assert got.status_code == 201, got.text

    async def walked(**params: str) -> tuple[int, list[int | None]]:
        seen, totals, offset = 0, [], None
        while True:
            query = {"user_id": user, "limit": 5, "count": "true", **params}
            page = (
                await client_a.get(
                    "/v1/memories", params=query | ({"offset": offset} if offset else {})
                )
            ).json()
            seen += len(page["items"])
            totals.append(page["total"])
            offset = page["next_offset"]
            if not offset:
                return seen, totals

    for params in ({}, {"importance": "high"}, {"importance": "low"}):
        seen, totals = await walked(**params)
        # Every page answers the count of all of them, not of itself.
        assert set(totals) == {seen}, (params, totals)
    assert (await walked())[0] == len(notes)
    plain = (await client_a.get("/v1/memories", params={"user_id": user, "limit": 5})).json()
    assert plain["total"] is None  # counted only when asked
    found = await client_a.get(
        "/v1/memories:search",
        params={
            "q": "which bay does the crate go to",
            "user_id": user,
            "importance": "high",
            "limit": 3,
        },
    )
    assert found.status_code == 200, found.text
    body = found.json()
    assert len(body["items"]) == 3 and body["total"] == (await walked(importance="high"))[0]
    assert (await client_a.get("/v1/memories", params={"count": "maybe"})).status_code == 422


async def test_strength_view_replays_the_past_before_the_last_reinforcement(
    client_a: httpx.AsyncClient,
) -> None:
    """A memory stored, repeated days later and recalled: the view draws the path from its
    creation through the repeat to the last reinforcement, where the stored curve starts."""
    text = f"Ines Carvalho keeps the studio keys in the blue drawer. ({RUN})"
    created = datetime.now(UTC) - timedelta(days=30)
    first = await client_a.post(
        "/v1/memories", json={"text": text, "created_at": created.isoformat()}
    )
    assert first.status_code == 201, first.text
    mid = first.json()["id"]
    again = await client_a.post(
        "/v1/memories",
        json={"text": text, "created_at": (created + timedelta(days=10)).isoformat()},
    )
    assert again.json()["id"] == mid, again.text
    await settle(client_a)
    recalled = await client_a.post(
        "/v1/recall", json={"query": "Where are the studio keys kept?", "k": 3}
    )
    assert mid in {m["memory_id"] for m in recalled.json()["situational_context"]}, recalled.text
    await settle(client_a)
    view = (await client_a.get(f"/v1/memories/{mid}/strength")).json()
    kinds = [e["kind"] for e in view["events"]]
    assert kinds[0] == "created" and "repeat" in kinds and "recall" in kinds
    past = view["past"]
    assert datetime.fromisoformat(past[0]["at"]) == created
    assert past[-1]["at"] == view["t_ref"] == view["curve"][0]["at"]
    # Everything the record counts was recorded with its time: the replay explains it.
    assert view["replay"]["unrecorded"] == 0 and view["replay"]["reinforcements"] == view["n"]
    repeat = next(e for e in view["events"] if e["kind"] == "repeat")
    steps = [p["strength"] for p in past if p["at"] == repeat["at"]]
    assert len(steps) == 2 and steps[1] > steps[0] and steps[1] == repeat["strength"]
