"""Which tenant each point of a Qdrant Edge shard belongs to, kept by the adapter that owns
the shard, so that the ownership check before a payload write or a delete needs no engine
call.

Why: that check was a filtered scroll (the tenant and the ids), which the engine answers
by checking the filter on every point of a segment it has not indexed yet, and the judge's
verdict and the extraction mark of each memory are such writes
(docs/decisions/0007-edge-ownership-record.md).

How it stays exact: an Edge shard is opened by one process only, and every write passes
through its adapter, which records here, under its write lock, what it wrote (an upsert
names the tenant of each point, a delete forgets the points) and what an ownership check
under that lock found in the engine. An id it does not know is asked of the engine. When
full it starts again empty (`capacity`): unknown ids are only slower, never wrong.
"""

from __future__ import annotations

from collections.abc import Iterable


class Owners:
    def __init__(self, capacity: int = 200_000) -> None:
        self.capacity = max(0, capacity)
        self._tenant_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._tenant_of)

    def split(self, tenant: str, ids: Iterable[str]) -> tuple[set[str], list[str]]:
        """Of `ids` (canonical), those known to be `tenant`'s, and those not known at all
        (a point known to be another tenant's is in neither)."""
        mine: set[str] = set()
        unknown: list[str] = []
        for i in ids:
            owner = self._tenant_of.get(i)
            if owner is None:
                unknown.append(i)
            elif owner == tenant:
                mine.add(i)
        return mine, unknown

    def remember(self, owned: Iterable[tuple[str, str]]) -> None:
        """(id, tenant) pairs the shard now holds; call under the adapter's write lock."""
        if not self.capacity:
            return
        for i, tenant in owned:
            if len(self._tenant_of) >= self.capacity and i not in self._tenant_of:
                self._tenant_of.clear()
            self._tenant_of[i] = tenant

    def forget(self, ids: Iterable[str]) -> None:
        for i in ids:
            self._tenant_of.pop(i, None)

    def clear(self) -> None:
        self._tenant_of.clear()
