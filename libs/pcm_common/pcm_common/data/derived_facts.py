"""The distilled facts (`domain.distil`) that name deleted memories among their sources,
and what is done to them (`domain.fact_sources`): dropped when no source is left,
trimmed to the ones left otherwise. Superseded facts too: a fact in any state is found.

Every path that deletes a memory follows it here (`data.forgetting.Forgetter`, so the
API's DELETE and retention; the erasure job drops the facts with its own deletes). Each
step reads the current state, so following a deletion again changes nothing more: the
sweeper follows every `deleted` change event once more (`pcm_sweeper.fact_changes`),
and that event is owed in the outbox before the memory is deleted, so a process that
stopped between the delete and this step is made up for.

Sources already tombstoned (`stores.redis.tombstones`, recorded before any delete) count
as deleted too: two deletes of one fact's sources at once each read the sources before
the other wrote them, and the later write would put back the id the earlier removed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pcm_common.domain import distil
from pcm_common.domain.fact_sources import Action, after_deletion
from pcm_common.messaging.events import MemoryChanged
from pcm_common.messaging.outbox import owe, pay
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.tombstones import deleted as tombstoned
from pcm_common.stores.vectors import Filter, ScoredPoint

log = get_logger("derived_facts")

# Deleted ids per filter: a fact's sources are matched "any of" these.
_BATCH = 256

# (tenant, memory id, reason) -> whether it was deleted: `Forgetter.forget`.
Drop = Callable[[str, str, str], Awaitable[bool]]


async def derived_from(
    res: StorePorts, tenant: str, ids: Sequence[str], fields: Sequence[str] = ("sources",)
) -> list[ScoredPoint]:
    """Every fact of `tenant` (any state) naming any of `ids` among its sources."""
    out: dict[str, ScoredPoint] = {}
    wanted = list(dict.fromkeys(ids))
    for i in range(0, len(wanted), _BATCH):
        flt = Filter(must={"kind": distil.KIND, "sources": wanted[i : i + _BATCH]})
        async for page in res.vectors.pages(tenant, flt=flt, fields=fields):
            out.update((p.id, p) for p in page)
    return list(out.values())


def _sources(payload: dict[str, Any]) -> list[str]:
    return [str(s) for s in payload.get("sources") or []]


class DerivedFacts:
    def __init__(self, res: StorePorts, drop: Drop) -> None:
        self.res = res
        self.drop = drop

    async def follow(self, tenant: str, deleted: Sequence[str], reason: str) -> tuple[int, int]:
        """Drop or trim the facts drawn from the `deleted` memories; returns (dropped,
        trimmed)."""
        found = await derived_from(self.res, tenant, deleted)
        if not found:
            return 0, 0
        named = {s for p in found for s in _sources(p.payload)}
        gone = set(deleted) | await tombstoned(self.res.redis, tenant, sorted(named))
        dropped = trimmed = 0
        owed: list[MemoryChanged] = []
        for point in found:
            fate = after_deletion(_sources(point.payload), gone)
            if fate.action is Action.DROP:
                # Its own delete: tombstone, owed event, a fact it had superseded restored.
                if await self.drop(tenant, point.id, reason):
                    dropped += 1
                    log.info(
                        "fact_dropped",
                        tenant=tenant,
                        memory_id=point.id,
                        source_ids=list(fate.removed),
                        reason=reason,
                    )
            elif fate.action is Action.TRIM:
                changed = [MemoryChanged(tenant=tenant, memory_id=point.id, change="updated")]
                await owe(self.res.redis, changed)
                await self.res.vectors.set_payload(
                    tenant, point.id, {"sources": list(fate.sources)}
                )
                owed += changed
                trimmed += 1
                log.info(
                    "fact_sources_trimmed",
                    tenant=tenant,
                    memory_id=point.id,
                    source_ids=list(fate.removed),
                    left=len(fate.sources),
                    reason=reason,
                )
        await pay(self.res, owed)
        return dropped, trimmed
