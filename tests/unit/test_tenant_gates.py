"""`TenantGates`: one tenant's large writes take turns, other tenants never wait for them,
a write that finds no turn in time is refused, and idle gates are dropped."""

from __future__ import annotations

import asyncio

import pytest

from pcm_ingest.tenant_gates import TenantBusy, TenantGates


async def _hold(gates: TenantGates, tenant: str, log: list[str], name: str, s: float) -> None:
    async with gates.turn(tenant):
        log.append(f"{name} in")
        await asyncio.sleep(s)
        log.append(f"{name} out")


async def test_one_tenant_takes_turns_and_another_does_not_wait() -> None:
    gates = TenantGates(per_tenant=1, wait_s=5.0)
    log: list[str] = []
    await asyncio.gather(
        _hold(gates, "a", log, "a1", 0.05),
        _hold(gates, "a", log, "a2", 0.05),
        _hold(gates, "b", log, "b1", 0.01),
    )
    assert log.index("a1 out") < log.index("a2 in")  # a's writes one after the other
    assert log.index("b1 in") < log.index("a1 out")  # b went in while a1 held its turn
    assert gates.in_use() == 0  # idle gates dropped


async def test_no_turn_in_time_is_refused_and_frees_nothing_it_did_not_hold() -> None:
    gates = TenantGates(per_tenant=1, wait_s=0.05)
    log: list[str] = []
    first = asyncio.create_task(_hold(gates, "a", log, "a1", 0.3))
    await asyncio.sleep(0.01)
    with pytest.raises(TenantBusy):
        async with gates.turn("a"):
            pytest.fail("a second turn was given")
    await first
    async with gates.turn("a"):  # the refused wait left the gate whole
        pass
    assert gates.in_use() == 0


async def test_zero_means_no_limit() -> None:
    gates = TenantGates(per_tenant=0, wait_s=0.01)
    log: list[str] = []
    await asyncio.gather(*(_hold(gates, "a", log, f"a{n}", 0.03) for n in range(3)))
    assert log[:3] == ["a0 in", "a1 in", "a2 in"]
