"""The inspector in a real browser against a real server: sign in, search, a memory's page
with its strength plot and graph, a recall, a policy edited, a dead letter retried, a
memory forgotten; another tenant's memory is "not found". Each page's screenshot is
written under var/inspector/."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
from playwright.async_api import Browser, Page, Route, expect
from redis.asyncio import Redis

from tests.browser.conftest import SEED, Inspector, Seeded, open_page, sign_in
from tests.conftest import KEYS, TEST_REDIS_URL, settle
from tests.inspector_data import SURPRISE, seed_dead_letter, seed_failed_run


async def test_sign_in_refuses_a_wrong_key_in_words(inspector: Inspector) -> None:
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/")
    await page.fill("#key", "not-a-key")
    await page.click("button[type=submit]")
    await expect(page.locator("#error")).to_contain_text("This key was refused")
    await inspector.shot("signin-refused")
    await page.fill("#key", "key-a")
    await page.click("button[type=submit]")
    await expect(page.locator("h1")).to_have_text("Memories")
    await expect(page.locator("#nav")).to_be_visible()


async def test_search_finds_by_meaning(
    inspector: Inspector, seeded: Seeded, client_a: httpx.AsyncClient
) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.fill("#f-q", "Which company does Marta work for?")
    await page.keyboard.press("Enter")
    rows = page.locator("tbody tr")
    await expect(rows.first).to_contain_text("Marta Kowalski")
    # Among the best few (the ranking of two memories about her may go either way).
    top = [await rows.nth(i).locator("a").get_attribute("href") for i in range(3)]
    assert f"/ui/memories/{seeded.works}" in top
    # What a search's count means: the best of all it ranked, every memory the filters
    # (none here) let through, as the listing counts them.
    await expect(page.locator("#match-count")).to_contain_text("the search ranks every one")
    listed = await client_a.get("/v1/memories", params={"limit": 1, "count": "true"})
    assert await _count_shown(page) == listed.json()["total"]
    await inspector.shot("search")


async def test_browse_pages_through_with_filters(
    inspector: Inspector, seeded: Seeded, client_a: httpx.AsyncClient
) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.select_option("#f-state", "active")
    await page.click("text=Apply")
    await page.wait_for_url("**/ui/memories?state=active")
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(25)  # a page; the seeds alone are more
    # The count is of every match, not of the page: the API's count for the same filter.
    await expect(page.locator("#match-count")).to_contain_text("match the filters")
    shown = await _count_shown(page)
    got = await client_a.get("/v1/memories", params={"state": "active", "count": "true"})
    total = got.json()["total"]
    assert shown == total > 25
    pages = -(-total // 25)
    await expect(page.locator(".pager")).to_contain_text(f"Page 1 of {pages}")
    await inspector.shot("memories")
    first_page = await rows.first.inner_text()
    await page.click("text=Next →")
    await expect(page.locator(".pager")).to_contain_text(f"Page 2 of {pages}")
    assert await _count_shown(page) == total  # the same count on every page
    assert await rows.first.inner_text() != first_page
    await page.click("text=← Previous")
    await expect(page.locator(".pager")).to_contain_text("Page 1")
    # Flagged: only what the sweeper judged surprising.
    await page.check("#f-flagged")
    await page.click("text=Apply")
    await expect(rows.first).to_contain_text(SURPRISE)
    texts = await rows.locator("td.text").all_inner_texts()
    assert "Swam 33 lengths at the Eastside pool this morning." not in texts


async def _count_shown(page: Page) -> int:
    """The number of matches the memories page states (`#match-count`)."""
    text = await page.locator("#match-count").inner_text()
    found = re.search(r"([\d,]+) memor", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


async def test_memory_page_draws_strength_and_graph(inspector: Inspector, seeded: Seeded) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{seeded.works}")
    await expect(page.locator(".memtext")).to_have_text(SEED[0])
    # uPlot and Cytoscape each draw on canvases inside their boxes.
    await expect(page.locator("#strength-plot canvas").first).to_be_visible()
    await expect(page.locator("#mem-strength + p")).to_contain_text("demotion threshold")
    await expect(page.locator("#graph-view canvas").first).to_be_visible()
    graph = page.locator("section[aria-labelledby=mem-graph]")
    await expect(graph).to_contain_text("Nordlys Robotics")
    await expect(graph.locator(".linked")).to_contain_text("moved to Tallinn")
    # Written together: one episode, listed in time order on the page.
    episode = page.locator("section[aria-labelledby=mem-episode]")
    await expect(episode.locator(".episode")).to_contain_text("moved to Tallinn")
    await inspector.shot("memory")
    # A linked memory is one click (or Enter on its link) away.
    await graph.locator(".linked a", has_text="moved to Tallinn").focus()
    await page.keyboard.press("Enter")
    await expect(page.locator(".memtext")).to_have_text(SEED[1])


# Where each colour of the strength plot lies on its canvas: the leftmost and rightmost
# columns of pixels near it (anti-aliased edges are near, not equal).
_COLUMNS = """([canvasSel, rgb]) => {
  const c = document.querySelector(canvasSel);
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let lo = Infinity, hi = -Infinity, n = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] < 200) continue;
    const off = Math.abs(d[i] - rgb[0]) + Math.abs(d[i + 1] - rgb[1]) + Math.abs(d[i + 2] - rgb[2]);
    if (off > 24) continue;
    const x = (i / 4) % c.width;
    lo = Math.min(lo, x); hi = Math.max(hi, x); n++;
  }
  return { lo, hi, n };
}"""
PAST_RGB, KNOWN_RGB = (0x8C, 0xB4, 0xF5), (0x1F, 0x6F, 0xEB)


async def test_strength_plot_draws_the_past_before_the_last_reinforcement(
    inspector: Inspector, client_a: httpx.AsyncClient
) -> None:
    """A memory stored 40 days ago and repeated 25 days ago: the plot draws its strength
    from its creation through the repeat (the replayed past, left of the last
    reinforcement), then the stored curve and its projection."""
    text = f"The bike shed padlock code is 4471. ({SEED[0][-9:-1]})"
    created = datetime.now(UTC) - timedelta(days=40)
    first = await client_a.post(
        "/v1/memories", json={"text": text, "created_at": created.isoformat()}
    )
    assert first.status_code == 201, first.text
    mid = first.json()["id"]
    again = await client_a.post(
        "/v1/memories",
        json={"text": text, "created_at": (created + timedelta(days=15)).isoformat()},
    )
    assert again.json() == {"id": mid, "status": "reinforced"}, again.text
    await settle(client_a)  # its entities extracted: the graph beside it drawn
    view = (await client_a.get(f"/v1/memories/{mid}/strength")).json()
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{mid}")
    await expect(page.locator("#strength-plot canvas").first).to_be_visible()
    past = page.locator("#strength-past")
    await expect(past).to_contain_text("replayed from its creation at 0.60")
    await expect(past).to_contain_text("through its 1 repeat, the events the record keeps")
    assert view["replay"]["reinforcements"] == view["n"] == 1
    legend = page.locator("section[aria-labelledby=mem-strength] .legend")
    await expect(legend).to_contain_text("before the last reinforcement, replayed")
    await expect(legend).to_contain_text("repeat")
    canvas = "#strength-plot canvas"
    drawn_past = await page.evaluate(_COLUMNS, [canvas, list(PAST_RGB)])
    known = await page.evaluate(_COLUMNS, [canvas, list(KNOWN_RGB)])
    assert drawn_past["n"] > 20 and known["n"] > 20, (drawn_past, known)
    # The replayed past ends where the stored curve begins (a few pixels of line caps).
    assert drawn_past["lo"] < known["lo"] and drawn_past["hi"] <= known["lo"] + 4
    await page.locator("section[aria-labelledby=mem-strength]").scroll_into_view_if_needed()
    await inspector.shot("memory-strength-past")


async def test_memory_page_on_a_phone(browser: Browser, pcm_url: str, seeded: Seeded) -> None:
    phone = await open_page(browser, pcm_url, width=390, height=844)
    try:
        await sign_in(phone, "key-a")
        await phone.page.goto(f"{pcm_url}/ui/memories/{seeded.works}")
        await expect(phone.page.locator("#strength-plot canvas").first).to_be_visible()
        # Nothing wider than the screen but the tables' own scroll boxes.
        width = await phone.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390
        await phone.shot("memory-phone")
    finally:
        await phone.page.context.close()


async def test_edit_keeps_the_old_version_as_a_diff(inspector: Inspector, seeded: Seeded) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{seeded.moved}")
    await page.click("text=Edit")
    new = SEED[1].replace("April", "May")
    await page.fill("#edit-text", new)
    await page.click("text=Save")
    await expect(page.locator(".memtext")).to_have_text(new)
    history = page.locator(".versions")
    await expect(history.locator("ins")).to_have_text("May")
    await expect(history.locator("del")).to_have_text("April")
    # Why the first version was replaced: an edit (the history's `reason`).
    await expect(history.locator("li").first.locator(".reason")).to_contain_text("edited")


async def test_recall_playground(inspector: Inspector, seeded: Seeded) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Recall")
    await page.fill("#r-query", "Where does Marta Kowalski work?")
    await page.fill("#r-k", "5")
    await page.click("form >> text=Recall")
    result = page.locator("#recall-result")
    await expect(result.locator(".prompt")).to_contain_text("[SITUATIONAL CONTEXT]")
    await expect(result.locator(".prompt")).to_contain_text("Nordlys Robotics")
    await expect(result.locator("tbody tr").first).to_contain_text("Marta Kowalski")
    await expect(result.locator(".bars li").first).to_be_visible()
    # The whole recall as one bar, a segment per sequential stage.
    await expect(result.locator(".stack .segment").first).to_be_visible()
    assert await result.locator(".stack .segment").count() >= 3
    await expect(result.locator(".stack")).to_have_attribute("aria-label", re.compile("ms in all"))
    await inspector.shot("recall")


async def test_policy_is_set_then_edited(inspector: Inspector, client_a: httpx.AsyncClient) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Governance")
    await page.select_option("#g-scope", "project")
    await page.fill("#g-project", "inspector-demo")
    await page.fill("#g-retention_days", "30")
    await page.click("text=Save policy")
    row = page.locator("tr", has_text="project / inspector-demo")
    await expect(row).to_contain_text("30")
    await row.locator("text=Edit").click()
    await expect(page.locator("#g-project")).to_have_value("inspector-demo")
    await page.fill("#g-retention_days", "60")
    await page.select_option("#g-capture_mode", "manual_only")
    await page.click("text=Save policy")
    await expect(page.locator("[role=status]")).to_have_text("Policy saved.")
    await expect(row).to_contain_text("60")
    await inspector.shot("governance")
    policies = (await client_a.get("/v1/governance")).json()["policies"]
    mine = [p for p in policies if p["project"] == "inspector-demo"]
    assert [(p["retention_days"], p["capture_mode"]) for p in mine] == [(60, "manual_only")]
    await client_a.delete(
        "/v1/governance", params={"scope": "project", "project": "inspector-demo"}
    )


async def test_attention_shows_stopped_routines_and_surprises(
    inspector: Inspector, seeded: Seeded
) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Attention")
    await expect(page.locator("#stopped-timeline canvas").first).to_be_visible()
    piano = page.locator("tr", has_text="piano lesson with Mr Okafor").first
    await expect(piano.locator(".badge")).to_have_text("stopped")
    await expect(piano).to_contain_text("weekly")
    surprises = page.locator("section[aria-labelledby=att-surprises]")
    await expect(surprises).to_contain_text(SURPRISE)
    await inspector.shot("attention")


async def test_pipeline_view_retries_a_dead_letter(inspector: Inspector) -> None:
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        letter_id, body = await seed_dead_letter(redis, KEYS["key-a"])
    finally:
        await redis.aclose()
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Pipeline")
    await expect(page.locator("tbody").first).to_contain_text("pcm.memory.written")
    await expect(page.locator(".jobs")).to_contain_text("consolidation")
    await expect(page.locator("main h2", has_text="Dead letters")).to_be_visible()
    await inspector.shot("pipeline")
    # The row shows the start of the event's memory id (a fresh one, so this row only).
    row = page.locator("tr", has_text=str(body["memory_id"])[:8])
    await row.get_by_label(f"Retry dead letter {letter_id}").click()
    await expect(row).to_contain_text("sent back")
    await expect(page.locator("[role=status]")).to_contain_text("Sent back to pcm.memory.changed")
    # Gone from the dead letters once the page is loaded again.
    await page.reload()
    await expect(page.locator("main h2", has_text="Dead letters")).to_be_visible()
    await expect(page.get_by_label(f"Retry dead letter {letter_id}")).to_have_count(0)


async def test_forget_a_memory_and_it_is_gone(
    inspector: Inspector, seeded: Seeded, client_a: httpx.AsyncClient
) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{seeded.umbrella}")
    await page.click("button:text-is('Forget')")
    await page.click("#forget-confirm")
    await expect(page.locator("[role=status]")).to_have_text("The memory was forgotten.")
    await page.fill("#f-q", "spare umbrella")
    await page.keyboard.press("Enter")
    await expect(page.locator("main")).not_to_contain_text("spare umbrella", timeout=5_000)
    await page.goto(f"{inspector.base}/ui/memories/{seeded.umbrella}")
    await expect(page.locator("main h1")).to_have_text("Not found")
    assert (await client_a.get(f"/v1/memories/{seeded.umbrella}")).status_code == 404


async def test_another_tenants_memory_is_not_found(inspector: Inspector, seeded: Seeded) -> None:
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{seeded.other_tenant}")
    await expect(page.locator("main h1")).to_have_text("Not found")
    await expect(page.locator("#error")).to_contain_text("no memory with this id for your key")
    await expect(page.locator("body")).not_to_contain_text("Oslo offsite")
    await inspector.shot("not-found")


async def test_a_page_without_a_key_asks_to_sign_in(inspector: Inspector, seeded: Seeded) -> None:
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{seeded.works}")
    await expect(page.locator("h1")).to_have_text("Sign in")
    await page.fill("#key", "key-a")
    await page.keyboard.press("Enter")
    # Back where the address pointed, once signed in.
    await expect(page.locator(".memtext")).to_have_text(SEED[0])


async def test_pipeline_shows_each_jobs_last_run(
    inspector: Inspector, client_a: httpx.AsyncClient
) -> None:
    ran = await client_a.post("/v1/jobs/consolidation")
    assert ran.status_code == 200, ran.text
    first = await _last_run(client_a, "consolidation")
    # A failed run, as the scheduler records one when a store refuses.
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        await seed_failed_run(redis, KEYS["key-a"], "graph_repair")
    finally:
        await redis.aclose()
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Pipeline")
    row = page.locator("#jobs .jobs tbody tr", has_text="consolidation")
    await expect(row.locator(f"time[datetime='{first}']")).to_be_visible()
    await expect(row).to_contain_text("on request")
    await expect(row.locator(".badge")).to_have_text("ok")
    await expect(row).to_contain_text(f"{ran.json()['changed']} changed")
    failed = page.locator("#jobs .jobs tbody tr", has_text="graph_repair")
    await expect(failed).to_contain_text("scheduled")
    await expect(failed.locator(".badge")).to_have_text("failed")
    await expect(failed).to_contain_text("graph store down")
    await inspector.shot("pipeline-jobs")
    # Run now, from the keyboard: the row shows the new run once it is done.
    await page.get_by_label("Run consolidation now").focus()
    await page.keyboard.press("Enter")
    await expect(page.locator("main [role=status]")).to_contain_text("consolidation:")
    second = await _last_run(client_a, "consolidation")
    assert second != first
    await expect(row.locator(f"time[datetime='{second}']")).to_be_visible()
    await page.locator("#jobs summary").click()
    await expect(page.locator("#jobs details time")).not_to_have_count(0)


async def _last_run(client: httpx.AsyncClient, job: str) -> str:
    got = await client.get("/v1/jobs/runs", params={"job": job, "limit": 1})
    assert got.status_code == 200, got.text
    return str(got.json()["jobs"][0]["runs"][0]["started_at"])


async def test_feedback_buttons_on_a_memory_and_in_the_playground(
    inspector: Inspector, client_a: httpx.AsyncClient
) -> None:
    text = "The Wrenfield greenhouse sensors report humidity every ten minutes."
    r = await client_a.post("/v1/memories", json={"text": text, "project": "feedback-ui"})
    mid = r.json()["id"]
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{mid}")
    said = page.locator("#feedback-result")
    await page.click("#feedback-helpful")
    await expect(said).to_contain_text("Marked helpful")
    await page.click("#feedback-helpful")
    await expect(said).to_contain_text("Already marked helpful: nothing changed.")
    await page.click("#feedback-wrong")
    await expect(said).to_contain_text("A rewrite from newer information was requested.")
    await inspector.shot("memory-feedback")

    await page.click("nav >> text=Recall")
    await page.fill("#r-query", "How often do the Wrenfield greenhouse sensors report?")
    await page.fill("#r-project", "feedback-ui")
    await page.click("form >> text=Recall")
    row = page.locator("#recall-result tbody tr", has_text="Wrenfield").first
    await row.locator("[data-feedback=not_helpful]").click()
    await expect(row.locator(".feedback .said")).to_have_text("marked not helpful")
    await row.locator("[data-feedback=not_helpful]").click()
    await expect(row.locator(".feedback .said")).to_have_text("already not helpful")
    await inspector.shot("recall-feedback")


async def test_playground_explains_scores_and_associates(
    inspector: Inspector, seeded: Seeded, client_a: httpx.AsyncClient
) -> None:
    """Each ranked candidate's graph link, scope bonus, feedback term and final score; the
    associative mode's associations, each with a Missed button; a missed memory by id."""
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.click("nav >> text=Recall")
    await page.fill("#r-query", "Where does Marta Kowalski work?")
    await page.fill("#r-k", "1")
    await page.select_option("#r-mode", "associative")
    await page.click("form >> text=Recall")
    result = page.locator("#recall-result")
    top = result.locator(f"tr[data-memory='{seeded.works}']").first
    await expect(top).to_be_visible()
    headers = await result.locator("thead").first.inner_text()
    for column in ("Relevance", "Strength", "Graph link", "Scope bonus", "Feedback", "Score"):
        assert column in headers
    # Marta and Nordlys Robotics are in the graph: the best memory is linked to the query.
    assert float(await top.locator("td.graph-link").inner_text()) > 0
    assert float(await top.locator("td.scope-bonus").inner_text()) == 0  # a global memory
    await expect(result.locator("#r-summary")).to_contain_text("Query charge")
    # Spreading from the best memory reaches the other memories about her.
    assoc = result.locator("h3#r-assoc + div tbody tr")
    await expect(assoc.first).to_be_visible()
    reached = [await assoc.nth(i).get_attribute("data-memory") for i in range(await assoc.count())]
    assert seeded.works not in reached
    await inspector.shot("recall-associative")
    await assoc.first.locator("[data-feedback=missed]").click()
    await expect(assoc.first.locator(".said")).to_have_text("marked missed")
    # A memory the recall did not show at all, reported by its id.
    rows = result.locator("tr[data-memory]")
    shown = {await rows.nth(i).get_attribute("data-memory") for i in range(await rows.count())}
    notes = await client_a.get("/v1/memories:search", params={"q": "Reading list item 7"})
    other = next(m["id"] for m in notes.json()["items"] if m["id"] not in shown)
    await page.fill("#r-missed", f"{inspector.base}/ui/memories/{other}")
    await page.click("text=Report missed")
    await expect(page.locator("#missed-form .said")).to_have_text("marked missed")


async def test_memory_page_shows_the_supersession_chain_both_ways(
    inspector: Inspector, client_a: httpx.AsyncClient
) -> None:
    me = {"user_id": f"chain-{SEED[0][-9:-1]}"}
    texts = [
        "Ana's team standup is at 9:30 every morning.",
        "Ana's team standup is now at 10:15 every morning.",
        "Ana's team standup is now at 11:00 every morning.",
    ]
    ids = []
    for text in texts:  # each an update of the one before, judged before the next
        got = await client_a.post("/v1/memories", json={"text": text, **me})
        assert got.status_code == 201, got.text
        ids.append(got.json()["id"])
        await settle(client_a)
    assert (await client_a.get(f"/v1/memories/{ids[1]}")).json()["superseded_by"] == ids[2]
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{ids[1]}")
    chain = page.locator("ol.chain li")
    await expect(chain).to_have_count(3)
    await expect(chain.nth(0)).to_contain_text("older")
    await expect(chain.nth(0).locator("a")).to_have_attribute("href", f"/ui/memories/{ids[0]}")
    await expect(chain.nth(1)).to_contain_text("this memory")
    await expect(chain.nth(2)).to_contain_text("newer")
    await expect(chain.nth(2).locator("a")).to_have_attribute("href", f"/ui/memories/{ids[2]}")
    await expect(page.locator(".badge.superseded")).to_be_visible()
    await inspector.shot("memory-chain")


async def test_memory_page_shows_the_surprisal_verdict_and_family(
    inspector: Inspector, seeded: Seeded, client_a: httpx.AsyncClient
) -> None:
    found = await client_a.get("/v1/memories", params={"flagged": "true", "limit": 100})
    mid = next(m["id"] for m in found.json()["items"] if m["text"] == SURPRISE)
    family = (await client_a.get(f"/v1/memories/{mid}")).json()["surprisal"]["family_ids"]
    assert family
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{mid}")
    part = page.locator("section[aria-labelledby=mem-surprisal]")
    await expect(part).to_contain_text("flagged as a surprise")
    await expect(part).to_contain_text("far higher than usual")
    await expect(part).to_contain_text("usually 31")
    links = part.locator("a")
    await expect(links).to_have_count(min(len(family), 12))
    await links.first.click()
    await expect(page.locator(".memtext")).to_contain_text("lengths at the Eastside pool")


async def test_memory_page_shows_its_episode_record(
    inspector: Inspector, client_b: httpx.AsyncClient
) -> None:
    """An episode that is over, consolidated: its memories' pages show the record and the
    episode's memories in time order. (Tenant B's, so tenant A's seeds keep no records.)"""
    start = datetime.now(UTC) - timedelta(days=2)
    episode = f"ep-trip-{SEED[0][-9:-1]}"
    texts = [
        "Booked the night train from Vienna to Kraków for the workshop.",
        "Checked into the Hotel Wawel near the old town in Kraków.",
        "Gave the workshop talk on soil sensors in Kraków.",
        "Took the morning train back from Kraków to Vienna.",
    ]
    ids = []
    for n, text in enumerate(texts):
        at = (start + timedelta(hours=n)).isoformat()
        got = await client_b.post(
            "/v1/memories", json={"text": text, "episode": episode, "created_at": at}
        )
        assert got.status_code == 201, got.text
        ids.append(got.json()["id"])
    await settle(client_b)
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert (await client_b.post("/v1/jobs/consolidation", json={"now": later})).status_code == 200
    listed = await client_b.get("/v1/memories", params={"episode": episode, "limit": 100})
    records = [m for m in listed.json()["items"] if m["source"] == "consolidation"]
    assert len(records) == 1
    await sign_in(inspector, "key-b")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{ids[2]}")
    part = page.locator("section[aria-labelledby=mem-episode]")
    await expect(part.locator("blockquote.record a")).to_have_attribute(
        "href", f"/ui/memories/{records[0]['id']}"
    )
    members = part.locator("ol.episode li")
    await expect(members).to_have_count(len(texts))
    for n, text in enumerate(texts):  # in time order, this memory marked
        await expect(members.nth(n)).to_contain_text(text)
    await expect(members.nth(2)).to_have_class("current")
    await inspector.shot("memory-episode")


async def test_pin_then_unpin(inspector: Inspector, client_a: httpx.AsyncClient) -> None:
    got = await client_a.post("/v1/memories", json={"text": "The spare office key is in drawer 3."})
    mid = got.json()["id"]
    await sign_in(inspector, "key-a")
    page = inspector.page
    await page.goto(f"{inspector.base}/ui/memories/{mid}")
    await page.click("button:text-is('Pin')")
    await expect(page.locator(".badge.pinned")).to_be_visible()
    await expect(page.locator("#mem-strength + p")).to_contain_text("Pinned")
    assert (await client_a.get(f"/v1/memories/{mid}")).json()["pinned"] is True
    await page.click("button:text-is('Unpin')")
    await expect(page.locator("button:text-is('Pin')")).to_be_visible()
    await expect(page.locator(".badge.pinned")).to_have_count(0)
    assert (await client_a.get(f"/v1/memories/{mid}")).json()["pinned"] is False


async def test_a_part_that_fails_says_so_and_the_rest_stays(
    inspector: Inspector, seeded: Seeded
) -> None:
    """The graph route answering 503 (the graph server down): the page says so in words in
    that part, and draws the others."""
    await sign_in(inspector, "key-a")
    page = inspector.page

    async def down(route: Route) -> None:
        body = {"error": "unavailable", "message": "the graph store does not answer"}
        await route.fulfill(status=503, json=body)

    await page.route("**/v1/memories/*/graph", down)
    await page.goto(f"{inspector.base}/ui/memories/{seeded.works}")
    graph = page.locator("section[aria-labelledby=mem-graph]")
    await expect(graph.locator(".problem")).to_contain_text("cannot reach its stores")
    await expect(page.locator(".memtext")).to_have_text(SEED[0])
    await expect(page.locator("#strength-plot canvas").first).to_be_visible()
    await inspector.shot("memory-part-failed")


async def test_every_page_fits_a_phone(browser: Browser, pcm_url: str, seeded: Seeded) -> None:
    phone = await open_page(browser, pcm_url, width=390, height=844)
    try:
        await sign_in(phone, "key-a")
        page = phone.page
        for name, ready in (
            ("memories", "tbody tr"),
            ("attention", "#stopped-timeline canvas"),
            ("governance", "form"),
            ("pipeline", ".jobs"),
            ("recall", "#r-query"),
        ):
            await page.goto(f"{pcm_url}/ui/{name}")
            await expect(page.locator(ready).first).to_be_visible()
            if name == "recall":
                await page.fill("#r-query", "Where does Marta Kowalski work?")
                await page.click("form >> text=Recall")
                await expect(page.locator("#recall-result tbody tr").first).to_be_visible()
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, (name, width)
            await phone.shot(f"{name}-phone")
    finally:
        await page.context.close()


async def test_filters_from_the_form(inspector: Inspector, client_a: httpx.AsyncClient) -> None:
    """User, scope and project, pinned, source, importance and the days created between, set
    in the form: only the memories that match are listed."""
    project, user = f"filters-{SEED[0][-9:-1]}", f"filter-user-{SEED[0][-9:-1]}"
    at = datetime(2025, 5, 20, 9, tzinfo=UTC)
    made = {}
    for name, body in {
        "pinned": {"text": "The lab's door code changes monthly.", "pinned": True},
        "plain": {"text": "The lab orders pipette tips on Fridays.", "importance": "high"},
        "old": {"text": "The lab moved to building C.", "created_at": at.isoformat()},
        "mcp": {"text": "The lab's fridge is set to four degrees.", "source": "mcp"},
    }.items():
        got = await client_a.post(
            "/v1/memories", json={**body, "project": project, "user_id": user}
        )
        assert got.status_code == 201, got.text
        made[name] = got.json()["id"]
    await sign_in(inspector, "key-a")
    page = inspector.page
    rows = page.locator("tbody tr")

    async def listed() -> set[str]:
        await expect(rows.first).to_be_visible()
        hrefs = [
            await rows.nth(i).locator("a").get_attribute("href") for i in range(await rows.count())
        ]
        return {str(h).rsplit("/", 1)[-1] for h in hrefs}

    await page.fill("#f-user_id", user)
    await page.select_option("#f-scope", "project")
    await page.fill("#f-project", project)
    await page.click("text=Apply")
    assert await listed() == set(made.values())
    assert await _count_shown(page) == len(made)
    await page.select_option("#f-pinned", "true")
    await page.click("text=Apply")
    await expect(rows).to_have_count(1)
    assert await listed() == {made["pinned"]}
    await expect(page.locator("#match-count")).to_have_text("1 memory matches the filters.")
    await page.select_option("#f-pinned", "")
    await page.select_option("#f-importance", "high")
    await page.click("text=Apply")
    await expect(rows).to_have_count(1)
    assert await listed() == {made["plain"]}
    await page.select_option("#f-importance", "")
    await page.select_option("#f-source", "mcp")
    await page.click("text=Apply")
    await expect(rows).to_have_count(1)
    assert await listed() == {made["mcp"]}
    await page.select_option("#f-source", "")
    await page.fill("#f-from", "2025-05-20")
    await page.fill("#f-until", "2025-05-21")
    await page.click("text=Apply")
    await expect(rows).to_have_count(1)
    assert await listed() == {made["old"]}
    # The filters are in the address: a reload (or a shared link) lists the same.
    await page.reload()
    await expect(rows).to_have_count(1)
    await expect(page.locator("#f-from")).to_have_value("2025-05-20")
