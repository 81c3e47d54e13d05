"""Large writes of one tenant take turns in each replica, so one tenant's bulk cannot take
every worker from the others.

A large request costs a few hundred ms of CPU (screen, embedding, derivation) in worker
threads and processes. A tenant sending fifty at once would queue them all for the two
firewall workers, ahead of every other tenant's large write; at most `per_tenant` of its
requests are in progress at a time (default 2: one tenant may still use both workers; why:
docs/decisions/0040-large-writes-per-tenant.md), the rest wait their turn here. A request
that waits longer than `wait_s` is refused (429 with Retry-After), nothing stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TenantBusy(Exception):
    """The tenant's earlier large writes held every turn for `wait_s`."""


class TenantGates:
    def __init__(self, per_tenant: int, wait_s: float) -> None:
        self.per_tenant = per_tenant  # 0: no limit
        self.wait_s = wait_s
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}  # holders and waiters, so idle gates are dropped

    def in_use(self) -> int:
        """Tenants with a large write holding or waiting for a turn."""
        return len(self._gates)

    @asynccontextmanager
    async def turn(self, tenant: str) -> AsyncIterator[None]:
        """Hold one of `tenant`'s turns for the body; raises `TenantBusy` when none came
        within `wait_s`."""
        if self.per_tenant <= 0:
            yield
            return
        gate = self._gates.setdefault(tenant, asyncio.Semaphore(self.per_tenant))
        self._users[tenant] = self._users.get(tenant, 0) + 1
        try:
            try:
                async with asyncio.timeout(self.wait_s):
                    await gate.acquire()
            except TimeoutError:
                raise TenantBusy(tenant) from None
            try:
                yield
            finally:
                gate.release()
        finally:
            self._users[tenant] -= 1
            if not self._users[tenant]:
                del self._users[tenant], self._gates[tenant]
