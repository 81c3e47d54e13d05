"""Deleting a memory and what must follow it, in one place for every path that deletes: the
API's DELETE (ingest) and a scope's retention period (the sweeper's governance job).

After the point is gone: a `deleted` change event (the graph-extractor drops the memory's
facts, recall replicas their pinned cache), the episode record quoting it is dropped, a
memory it had superseded is current again, and the distilled facts drawn from it are
dropped or keep only their other sources (`data.derived_facts`). Each change event is owed
in the outbox (`pcm_common.messaging.outbox`) before its change is made, so a publish that
fails is made up for.
"""

from __future__ import annotations

from typing import Any

from pcm_common.data.derived_facts import DerivedFacts
from pcm_common.domain.consolidation import GroupKey, record_id
from pcm_common.domain.memory import Scope, Source, State
from pcm_common.messaging.events import MemoryChanged
from pcm_common.messaging.outbox import forgive, owe, pay
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.tombstones import record

log = get_logger("forgetting")

# What names a memory's episode group (`domain.consolidation.GroupKey`).
GROUP_FIELDS = ("episode", "user_id", "scope", "workspace", "project", "source")


class Forgetter:
    def __init__(self, res: StorePorts) -> None:
        self.res = res
        self.facts = DerivedFacts(res, self.forget)

    async def forget(self, tenant: str, memory_id: str, reason: str = "api") -> bool:
        """Delete one memory; False when the tenant has no such memory."""
        found = await self.res.vectors.get(
            tenant, [memory_id], fields=(*GROUP_FIELDS, "supersedes", "superseded_by", "state")
        )
        if found:  # graph repair removes facts only of memories with a tombstone
            await record(self.res.redis, tenant, [memory_id])
        owed = [MemoryChanged(tenant=tenant, memory_id=memory_id, change="deleted")]
        await owe(self.res.redis, owed)
        deleted = await self.res.vectors.delete(tenant, [memory_id])
        if not deleted:
            await forgive(self.res.redis, owed)
            return False
        log.info("memory_deleted", tenant=tenant, memory_id=memory_id, reason=reason)
        if found:
            owed += await self.drop_episode_record(tenant, memory_id, found[0].payload)
            owed += await self._restore_superseded(tenant, memory_id, found[0].payload)
            # Facts and episode records are nobody's source.
            if found[0].payload.get("source") != Source.CONSOLIDATION.value:
                await self.facts.follow(tenant, [memory_id], reason)
        # Every store change made before any event goes out: a publish that fails leaves
        # the events owed, not the changes undone.
        await pay(self.res, owed)
        return True

    async def _restore_superseded(
        self, tenant: str, memory_id: str, payload: dict[str, Any]
    ) -> list[MemoryChanged]:
        """Deleting the memory that superseded another makes that one current again, unless
        the deleted one was itself superseded: then the chain closes over the gap (A, B
        superseded by C, B deleted: A is superseded by C). Returns the change event owed,
        for the caller to pay."""
        old = payload.get("supersedes")
        if not old:
            return []
        prev = await self.res.vectors.get(tenant, [str(old)], fields=("state", "superseded_by"))
        if not prev or prev[0].payload.get("superseded_by") != memory_id:
            return []
        if prev[0].payload.get("state") != State.SUPERSEDED.value:
            return []
        newer = payload.get("superseded_by")
        if payload.get("state") == State.SUPERSEDED.value and newer:
            await self.res.vectors.set_payload_many(
                tenant, [(str(old), {"superseded_by": newer}), (str(newer), {"supersedes": old})]
            )
            log.info("supersession_relinked", tenant=tenant, memory_id=str(old), by=newer)
            return []
        restored = [MemoryChanged(tenant=tenant, memory_id=str(old), change="updated")]
        await owe(self.res.redis, restored)
        await self.res.vectors.set_payload(
            tenant, str(old), {"state": State.ACTIVE.value, "superseded_by": None}
        )
        log.info("memory_restored", tenant=tenant, memory_id=str(old), deleted=memory_id)
        return restored

    async def drop_episode_record(
        self, tenant: str, memory_id: str, payload: dict[str, Any]
    ) -> list[MemoryChanged]:
        """Delete the episode record that quotes this memory, so a deleted or rewritten text
        does not live on in it until the next consolidation run; that run rebuilds the
        record from the sources left (with the new text), once the episode qualifies.
        Returns the change event owed, for the caller to pay."""
        if not payload.get("episode") or payload.get("source") == Source.CONSOLIDATION.value:
            return []
        key = GroupKey(
            episode=str(payload["episode"]),
            user_id=payload.get("user_id"),
            scope=str(payload.get("scope") or Scope.GLOBAL.value),
            workspace=payload.get("workspace") or "",
            project=payload.get("project") or "",
        )
        rid = record_id(tenant, key)
        found = await self.res.vectors.get(tenant, [rid], fields=["metadata"])
        if not found or memory_id not in (found[0].payload.get("metadata") or {}).get(
            "sources", []
        ):
            return []
        await record(self.res.redis, tenant, [rid])
        gone = [MemoryChanged(tenant=tenant, memory_id=rid, change="deleted")]
        await owe(self.res.redis, gone)
        if not await self.res.vectors.delete(tenant, [rid]):
            await forgive(self.res.redis, gone)
            return []
        log.info("episode_record_dropped", tenant=tenant, memory_id=rid, source_id=memory_id)
        return gone
