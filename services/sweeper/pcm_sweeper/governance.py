"""The `governance` job: each scope's retention period and memory cap
(`pcm_common.domain.governance`). Expired memories are deleted through the same path as the
API's DELETE (`pcm_common.data.forgetting`), which drops the distilled facts left with no
source; a fact with no stored source at all is dated by itself (`domain.fact_sources`). A
scope over its cap has its weakest active memories archived, as demotion would. A tenant
without a retention or cap policy costs one Redis read. Idempotent: a second run finds
nothing left to do."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from pcm_common.data.forgetting import Forgetter
from pcm_common.domain import distil
from pcm_common.domain.clock import utcnow
from pcm_common.domain.fact_sources import dated_alone
from pcm_common.domain.governance import (
    CapEntry,
    Effective,
    Policy,
    effective,
    expired,
    last_stated,
    over_cap,
    scope_key,
)
from pcm_common.domain.memory import Source, State, Strength
from pcm_common.ports import StorePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.governance import GovernanceStore
from pcm_common.stores.vectors import Filter
from pcm_sweeper.archiving import archive

log = get_logger("sweeper.governance")

_FIELDS = (
    "scope",
    "workspace",
    "project",
    "created_ts",
    "repeats",
    "history",
    "pinned",
    "state",
    "source",
    "strength",
)

_FACT_FIELDS = ("scope", "workspace", "project", "created_ts", "pinned", "sources")
_GET_BATCH = 256

ScopeKey = tuple[str, str, str]  # scope, workspace, project


class Governance:
    def __init__(self, res: StorePorts) -> None:
        self.res = res
        self.store = GovernanceStore(res.redis)
        self.forgetter = Forgetter(res)

    async def enforce(self, tenant: str, now: datetime) -> int:
        """Delete what outlived its scope's retention, archive what is over its cap; returns
        how many memories changed. A simulated `now` (POST /v1/jobs/governance) may not run
        ahead of the real clock: this job deletes."""
        now = min(now, utcnow())
        policies = await self.store.all(tenant)
        if not any(p.retention_days or p.max_memories for p in policies.values()):
            return 0
        in_force: dict[ScopeKey, Effective] = {}
        expired_ids: list[str] = []
        active: dict[ScopeKey, list[CapEntry]] = defaultdict(list)
        # Episode records are not read: they go with their sources.
        memories = Filter(must_not={"source": Source.CONSOLIDATION.value})
        async for points in self.res.vectors.pages(tenant, flt=memories, fields=_FIELDS):
            for p in points:
                pl = p.payload
                if pl.get("created_ts") is None:
                    continue  # not a memory this job can date: left alone
                key = scope_key(
                    str(pl.get("scope")), pl.get("workspace") or "", pl.get("project") or ""
                )
                rule = in_force.get(key)
                if rule is None:
                    rule = in_force[key] = effective(policies, *key)
                pinned = bool(pl.get("pinned"))
                created_ts = float(pl["created_ts"])
                stated = last_stated(
                    datetime.fromtimestamp(created_ts, UTC),
                    pl.get("repeats") or [],
                    [h.get("changed_at") for h in pl.get("history") or [] if isinstance(h, dict)],
                )
                if not pinned and expired(stated, rule.retention_days, now):
                    expired_ids.append(p.id)
                elif rule.max_memories and pl.get("state") == State.ACTIVE.value:
                    strength = Strength.model_validate(pl["strength"]).at(now, pinned)
                    active[key].append(CapEntry(p.id, strength, created_ts, pinned))

        changed = 0
        for memory_id in expired_ids:
            changed += await self.forgetter.forget(tenant, memory_id, reason="retention")
        changed += await self._expire_facts(tenant, policies, in_force, now)
        for key, entries in active.items():
            for memory_id in over_cap(entries, in_force[key].max_memories):
                await archive(self.res, tenant, memory_id, reason="cap")
                changed += 1
        return changed

    async def _expire_facts(
        self,
        tenant: str,
        policies: dict[str, Policy],
        in_force: dict[ScopeKey, Effective],
        now: datetime,
    ) -> int:
        """Delete the distilled facts past their scope's retention that no stored memory is
        a source of (those with one go with their sources: `data.derived_facts`)."""
        due: list[tuple[str, list[str]]] = []
        facts = Filter(must={"kind": distil.KIND})
        async for points in self.res.vectors.pages(tenant, flt=facts, fields=_FACT_FIELDS):
            for p in points:
                pl = p.payload
                if pl.get("created_ts") is None or pl.get("pinned"):
                    continue
                key = scope_key(
                    str(pl.get("scope")), pl.get("workspace") or "", pl.get("project") or ""
                )
                rule = in_force.get(key)
                if rule is None:
                    rule = in_force[key] = effective(policies, *key)
                created = datetime.fromtimestamp(float(pl["created_ts"]), UTC)
                if expired(created, rule.retention_days, now):
                    due.append((p.id, [str(s) for s in pl.get("sources") or []]))
        if not due:
            return 0
        named = sorted({s for _, sources in due for s in sources})
        stored: set[str] = set()
        for i in range(0, len(named), _GET_BATCH):
            found = await self.res.vectors.get(tenant, named[i : i + _GET_BATCH], fields=("state",))
            stored.update(p.id for p in found)
        changed = 0
        for fact_id, sources in due:
            if dated_alone(sources, stored):
                changed += await self.forgetter.forget(tenant, fact_id, reason="retention")
        return changed
