"""Background work in a process waits for its foreground requests, but only so long."""

from __future__ import annotations

import asyncio
import time

from pcm_common.runtime.foreground import Foreground


async def test_idle_process_never_waits() -> None:
    fg = Foreground()
    t0 = time.perf_counter()
    assert await fg.wait_idle(5.0)
    assert time.perf_counter() - t0 < 0.1


async def test_waits_for_the_request_to_finish() -> None:
    fg = Foreground()
    order: list[str] = []

    async def request() -> None:
        with fg.request():
            await asyncio.sleep(0.05)
            order.append("request done")

    async def background() -> None:
        await asyncio.sleep(0)  # let the request start first
        assert fg.active == 1
        assert await fg.wait_idle(5.0)
        order.append("background step")

    await asyncio.gather(request(), background())
    assert order == ["request done", "background step"]
    assert fg.active == 0


async def test_wait_is_bounded_while_requests_keep_coming() -> None:
    fg = Foreground()
    with fg.request():
        t0 = time.perf_counter()
        assert not await fg.wait_idle(0.05)
        assert 0.04 < time.perf_counter() - t0 < 1.0
    assert await fg.wait_idle(0.05)


def test_usable_from_one_event_loop_after_another() -> None:
    fg = Foreground()

    async def once() -> bool:
        with fg.request():
            pass
        return await fg.wait_idle(0.5)

    assert asyncio.run(once())
    assert asyncio.run(once())


async def test_quiet_period_after_a_request() -> None:
    """A step waits for a gap of `quiet_s` after the last request, not just for the end of
    the request in flight (the next one of a back-to-back client would start mid-step)."""
    fg = Foreground()
    with fg.request():
        pass
    t0 = time.perf_counter()
    assert await fg.wait_idle(1.0, quiet_s=0.05)
    assert 0.04 < time.perf_counter() - t0 < 0.5

    async def back_to_back() -> None:
        for _ in range(8):
            with fg.request():
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.002)

    client = asyncio.create_task(back_to_back())
    await asyncio.sleep(0.01)
    t0 = time.perf_counter()
    assert not await fg.wait_idle(0.1, quiet_s=0.05)  # bounded: never starved
    assert 0.09 < time.perf_counter() - t0 < 0.5
    await client
    assert await fg.wait_idle(1.0, quiet_s=0.01)
