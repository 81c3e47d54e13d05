"""A query that names a time also searches the memories written then
(pcm_common.domain.time_cues, pcm_recall.candidates.within_span), through the real recall
path: the weaker match written in the month asked about becomes as relevant as the best
match overall, and the search inside the span keeps the query's visibility."""

from __future__ import annotations

import uuid
from datetime import datetime

from pcm_client import AsyncPcmClient
from tests.conftest import settle

MEMORIES = [
    (
        "2022-02-12T10:00:00Z",
        "Hiked the ridge trail with the church group; the church group loved it.",
    ),
    ("2022-03-19T10:00:00Z", "Church group hike on the ridge trail again with the church group."),
    ("2022-04-16T10:00:00Z", "Went to the lake with a few friends from church."),
    ("2022-05-21T10:00:00Z", "Church group hiking trip up the ridge with the whole church group."),
]
NOW = "2022-06-01T12:00:00Z"


async def _store(client: AsyncPcmClient, project: str, at: str, text: str) -> str:
    when = datetime.fromisoformat(at)
    r = await client.store(text, scope="project", project=project, created_at=when)
    assert r.status == "created" and r.id, r
    return r.id


async def _ranked(
    client: AsyncPcmClient, project: str, query: str
) -> tuple[list[str], dict[str, float]]:
    """The recalled ids in rank order, and each one's relevance."""
    out = await client.recall(query, project=project, now=datetime.fromisoformat(NOW))
    items = out.situational_context
    return [c.memory_id for c in items], {c.memory_id: c.relevance for c in items}


async def test_a_named_month_brings_up_what_was_written_then(pcm_a: AsyncPcmClient) -> None:
    project = f"time-cue-{uuid.uuid4().hex[:8]}"
    other = f"time-cue-other-{uuid.uuid4().hex[:8]}"
    ids = [await _store(pcm_a, project, at, text) for at, text in MEMORIES]
    april = ids[2]
    # Another project's April memory matches the query best of all, and stays unseen.
    hidden = await _store(
        pcm_a, other, "2022-04-20T10:00:00Z", "What I did with the church group in April."
    )
    await settle(pcm_a)

    plain, plain_rel = await _ranked(pcm_a, project, "What did I do with the church group?")
    cued, cued_rel = await _ranked(
        pcm_a, project, "What did I do with the church group in April 2022?"
    )
    assert set(plain) == set(cued) == set(ids)  # the same memories, another order
    # Without the month the April memory is among the weaker matches; with it, the best
    # match of its month is as relevant as the best match overall (its place is not
    # asserted: graph links add a bonus to the memories that name "church group").
    assert plain_rel[april] < max(plain_rel.values()) and plain.index(april) >= 2, plain_rel
    assert cued_rel[april] == max(cued_rel.values()), cued_rel
    assert hidden not in cued
