"""Routes the inspector needs beyond the memory API: a search that reinforces nothing, a
memory's strength over time and its graph neighbourhood, the tenant's routines and dead
letters (read-only), and a dead letter's retry. Like every `/v1` route they answer for the
key's tenant only: another tenant's id is 404 as if absent."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from pcm_common.data.listing import Listing
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.domain.memory import MemoryRecord, Scope, State
from pcm_common.models.sparse import encode_query
from pcm_common.runtime.http import KEYED, ApiError, Res, Tenant, error_responses, refuse_future
from pcm_common.runtime.resources import Resources
from pcm_common.stores.graph.port import Entity
from pcm_common.stores.vectors import Filter, ScoredPoint
from pcm_ingest.service import present
from pcm_inspector.attention import attention_view
from pcm_inspector.dead_letters import DeadLetterBusy, dead_letters, retry
from pcm_inspector.strength_view import strength_view

router = APIRouter(prefix="/v1", tags=["inspector"], responses=KEYED)
NOT_FOUND = error_responses(404)
# Linked memories drawn around one memory: a readable graph, not the whole tenant.
NEIGHBOURS = 15
Name = Annotated[str | None, Query(min_length=1, max_length=200)]


async def _record(res: Resources, tenant: str, memory_id: str) -> MemoryRecord:
    try:
        mid = str(uuid.UUID(memory_id))
    except ValueError:
        raise ApiError(404, "memory_not_found", "not a memory id") from None
    found = await res.vectors.get(tenant, [mid])
    if not found:
        raise ApiError(404, "memory_not_found", memory_id)
    return MemoryRecord.from_payload(found[0].payload)


@router.get("/memories:search")
async def search_memories(
    tenant: Tenant,
    res: Res,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    scope: Scope | None = None,
    workspace: Name = None,
    project: Name = None,
    state: State | None = None,
    pinned: bool | None = None,
    user_id: Name = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    *,
    more: Listing,
) -> dict[str, Any]:
    """The memories nearest the query, by meaning and by words (the hybrid search recall
    runs), filtered as `GET /v1/memories`; unlike a recall it reinforces nothing. `total`:
    every memory the filters match, all of which the search ranks (by meaning every one
    has a score, so the count of matches is that of the filters; `items` are the best)."""
    if not q.strip():
        raise ApiError(422, "invalid_request", "q is empty")
    must = {
        k: v.value if isinstance(v, Scope | State) else v
        for k, v in {
            "scope": scope,
            "workspace": workspace,
            "project": project,
            "state": state,
            "pinned": pinned,
            "user_id": user_id,
        }.items()
        if v is not None
    }
    flt = more.narrow(Filter(must=must))

    async def ranked() -> list[ScoredPoint]:
        qvec = await res.embedder.embed_query(q)
        return await res.vectors.search(tenant, qvec, limit=limit, flt=flt, sparse=encode_query(q))

    hits, total = await asyncio.gather(ranked(), res.vectors.count(tenant, flt))
    return {
        "items": [present(h.payload) | {"score": round(h.score, 6)} for h in hits],
        "total": total,
    }


@router.get("/memories/{memory_id}/strength", responses=NOT_FOUND)
async def memory_strength(
    memory_id: str, tenant: Tenant, res: Res, now: datetime | None = None
) -> dict[str, Any]:
    """Strength over time: the known events, the decay curve since the last
    reinforcement (projected past `now`), and when it crosses the demotion threshold."""
    refuse_future(now, res.settings.max_future_s, "now")
    rec = await _record(res, tenant, memory_id)
    return strength_view(rec, as_utc(now) if now else utcnow())


def _node(e: Entity) -> dict[str, str]:
    return {"key": e.key, "name": e.name, "type": e.type}


@router.get("/memories/{memory_id}/graph", responses=NOT_FOUND)
async def memory_graph(memory_id: str, tenant: Tenant, res: Res) -> dict[str, Any]:
    """The memory's entities, the typed relations leaving them, and the other memories
    that mention them (with the entities each shares)."""
    rec = await _record(res, tenant, memory_id)
    graph = res.graph
    # One round of graph reads: the neighbours are walked from the memory's own node, so
    # they need not wait for its entities (docs/benchmarks.md, the inspector at 100k).
    entities, relations, near = await asyncio.gather(
        graph.entities_of(tenant, rec.id),
        graph.relations_of(tenant, rec.id),
        graph.neighbours(tenant, rec.id, limit=NEIGHBOURS),
    )
    points = await res.vectors.get(tenant, list(near), fields=["text", "state"])
    texts = {p.id: p.payload for p in points}
    own = max(1, len({e.key for e in entities}))
    return {
        "id": rec.id,
        "extracted": rec.graph.extracted,
        "entities": [_node(e) for e in entities],
        "relations": [
            {"source": _node(r.source), "type": r.type, "target": _node(r.target)}
            for r in relations
        ],
        "memories": [
            {
                "id": i,
                "text": texts[i].get("text", ""),
                "state": texts[i].get("state", "active"),
                "link": round(min(1.0, len(shares) / own), 4),
                "shares": shares,
            }
            for i, shares in near.items()
            if i in texts  # in the graph but gone from the store: not shown
        ],
    }


@router.get("/attention")
async def attention(tenant: Tenant, res: Res, now: datetime | None = None) -> dict[str, Any]:
    """The tenant's routines (usual interval, last entry, regular / irregular / stopped)
    and its memories judged surprising, as the recall's flags would judge them at `now`."""
    refuse_future(now, res.settings.max_future_s, "now")
    return await attention_view(res, tenant, as_utc(now) if now else utcnow())


@router.get("/dead-letters")
async def list_dead_letters(
    tenant: Tenant, res: Res, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> dict[str, Any]:
    """The caller's events that failed every delivery (newest first), with the error."""
    return await dead_letters(res.redis, tenant, limit)


@router.post("/dead-letters/{letter_id}:retry", responses=error_responses(404, 409))
async def retry_dead_letter(letter_id: str, tenant: Tenant, res: Res) -> dict[str, Any]:
    """Send one of the caller's dead letters back to the stream it failed on, and remove
    it from the dead letters in the same transaction: a second call answers 404."""
    try:
        done = await retry(res.redis, res.bus, tenant, letter_id)
    except DeadLetterBusy as exc:
        raise ApiError(409, "dead_letter_busy", str(exc)) from None
    if done is None:
        raise ApiError(404, "dead_letter_not_found", letter_id)
    return done
