"""No grouping crosses owners, end to end through the HTTP API with pcm-client (real Redis
Streams, the sweeper's judging, Qdrant Edge, the graph server).

Two writers keep the same routine in the same words. Whether they are two users of one
tenant, two projects of one tenant or two tenants, neither one's family, usual-pattern
text, flags, supersession, near-duplicate merge or episode record is built from the other's
memories. Each path also has a control inside one owner, so a path that does nothing cannot
pass for one that keeps owners apart.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pcm_cli.testing import settle
from pcm_client import AsyncPcmClient

T0 = datetime(2025, 1, 3, 9, 0, tzinfo=UTC)
NOW = datetime(2025, 12, 1, 9, 0, tzinfo=UTC)  # the other's routine has long stopped
BILL = "Kestrel Telecom took £{} for the phone plan this month."
QUERY = "Help me with my household budget, phone plan costs"
EPISODE_LINES = [
    "Unpacked the {} boxes in the hallway.",
    "Assembled the {} bookshelf in the study.",
    "Hung the {} curtains in the bedroom.",
]


@dataclass
class Writer:
    client: AsyncPcmClient
    fields: dict[str, Any]  # owner fields sent with every write
    asker: dict[str, Any]  # the same owner's fields in a recall or a listing


def pair(kind: str, a: AsyncPcmClient, b: AsyncPcmClient) -> tuple[Writer, Writer]:
    """The other writer and the one under test, kept apart by `kind`."""
    run = uuid.uuid4().hex[:8]
    if kind == "users":
        u1, u2 = f"bob-{run}", f"alice-{run}"
        return Writer(a, {"user_id": u1}, {"user_id": u1}), Writer(
            a, {"user_id": u2}, {"user_id": u2}
        )
    if kind == "projects":
        # One user in two projects. Named: an asker without a user sees the whole tenant's
        # global memories, among them other cases' bills, whose amounts may coincide.
        p1, p2, u = f"ledger-{run}", f"atlas-{run}", f"dana-{run}"
        return Writer(
            a, {"user_id": u, "scope": "project", "project": p1}, {"user_id": u, "project": p1}
        ), Writer(
            a, {"user_id": u, "scope": "project", "project": p2}, {"user_id": u, "project": p2}
        )
    u = f"carol-{run}"  # the same user name in two tenants
    return Writer(a, {"user_id": u}, {"user_id": u}), Writer(b, {"user_id": u}, {"user_id": u})


async def write(w: Writer, text: str, at: datetime, **extra: Any) -> dict[str, Any]:
    r = await w.client.store(text, created_at=at, **w.fields, **extra)
    assert r.id, r  # stored (created, reinforced or merged), not skipped
    return r.model_dump(mode="json", exclude_unset=True)


async def memory(w: Writer, mid: str) -> dict[str, Any]:
    return (await w.client.get(mid)).model_dump(mode="json", exclude_unset=True)


async def listing(w: Writer) -> list[dict[str, Any]]:
    return (await w.client.list_memories(limit=500, **w.asker)).items


@pytest.mark.parametrize("kind", ["users", "projects", "tenants"])
async def test_no_path_groups_across_owners(
    kind: str, pcm_a: AsyncPcmClient, pcm_b: AsyncPcmClient
) -> None:
    other, mine = pair(kind, pcm_a, pcm_b)
    tag = uuid.uuid4().hex[:6]  # keeps this case's texts and amounts its own
    rng = random.Random(tag)
    other_bills = [f"{rng.uniform(20, 27):.2f}" for _ in range(7)]

    # A routine kept by the other writer, and two entries of the same routine of mine.
    other_ids = [
        (await write(other, BILL.format(v), T0 + timedelta(days=30 * i)))["id"]
        for i, v in enumerate(other_bills)
    ]
    my_first = (await write(mine, BILL.format("95.10"), T0 + timedelta(days=200)))["id"]
    mine_bill = await write(mine, BILL.format("96.50"), T0 + timedelta(days=230))

    # The same note by both: a near-duplicate (an exact copy here) only within one owner.
    note = f"Parked on level 3 of the Kestrel garage, bay {tag}."
    other_note = await write(other, note, T0 + timedelta(days=240))
    my_note = await write(mine, note, T0 + timedelta(days=241))
    my_note_again = await write(mine, note, T0 + timedelta(days=242))

    # An update: it supersedes only the same owner's statement.
    review = "The budget review with the {} team is {} at {} on Mondays."
    other_old = await write(other, review.format(tag, "held", "9:30"), T0 + timedelta(days=250))
    my_old = await write(mine, review.format(tag, "held", "9:30"), T0 + timedelta(days=251))
    my_new = await write(mine, review.format(tag, "now", "10:15"), T0 + timedelta(days=252))

    # One client-given episode id used by both: each owner's episode record is its own.
    episode = f"move-{tag}"
    start = T0 + timedelta(days=260)
    for w in (other, mine):
        for n, line in enumerate(EPISODE_LINES):
            await write(w, line.format(tag), start + timedelta(minutes=5 * n), episode=episode)
    for client in {id(w.client): w.client for w in (other, mine)}.values():
        await settle(client)
        await client.consolidate(NOW)
        await settle(client)

    # Family and usual pattern: mine only.
    judged = (await memory(mine, mine_bill["id"]))["surprisal"]
    assert judged["judged_at"]
    assert my_first in judged["family_ids"]  # control: the same owner's entry is family
    assert not set(judged["family_ids"]) & set(other_ids)
    assert not any(v in (judged["usual"] or "") for v in other_bills)

    # Near-duplicates: merged within one owner, never across.
    assert my_note["status"] == "created" and my_note["id"] != other_note["id"]
    assert my_note_again["id"] == my_note["id"]

    # Supersession: within one owner only.
    assert (await memory(mine, my_new["id"])).get("supersedes") == my_old["id"]
    assert (await memory(mine, my_old["id"]))["state"] == "superseded"
    assert (await memory(other, other_old["id"]))["state"] == "active"

    # Episode records: mine holds my lines and nothing of the other's.
    listed = [m for m in await listing(mine) if m.get("episode") == episode]
    mine_ids = {m["id"] for m in listed if m.get("source") != "consolidation"}
    ours = [m for m in listed if m.get("source") == "consolidation"]
    assert len(ours) == 1, ours
    assert set(ours[0]["metadata"]["sources"]) == mine_ids

    # A recall of mine: no flag, usual text or context built from the other's routine.
    answer = await mine.client.recall(QUERY, now=NOW, k=50, **mine.asker)
    out = answer.model_dump(mode="json", exclude_unset=True)
    theirs = set(other_ids) | {other_note["id"], other_old["id"]}
    shown = {c["memory_id"] for c in out["situational_context"] + out["episode_context"]}
    assert not shown & theirs
    for flag in out["anomaly_flags"]:
        assert flag["memory_id"] not in theirs
        assert not any(v in flag["usual"] + flag["differs"] for v in other_bills), flag
    leaked = [v for v in other_bills if v in out["prompt"]]
    assert not leaked, (leaked, out["prompt"])
