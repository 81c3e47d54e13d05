"""Where the firewall's screen runs: a thread for small requests, a worker process for
large ones, and 503 `firewall_busy` past the deadline."""

from __future__ import annotations

import pytest

from pcm_ingest.firewall import WriteFirewall
from pcm_ingest.firewall.runner import FirewallBusy, ScreenRunner

SECRET = "push with ghp_1234567890abcdefghijklmnopqrstuvwxyzAB please"
PII = "call (415) 555-2671 or mail ann@example.org"


async def test_small_and_large_requests_are_screened_alike() -> None:
    runner = ScreenRunner(WriteFirewall(), process_chars=1_000, workers=1, deadline_s=30)
    runner.start()
    try:
        for pad in ("", " filler" * 500):  # a thread, then a worker process
            texts, metas, names = await runner.screen_request(
                [SECRET + pad, PII + pad], [{"note": PII}], ["ann"]
            )
            assert texts[0].blocked_kinds == ["GitHub Token"]
            assert texts[1].redacted_kinds == ["email", "phone"]
            assert metas[0].metadata == {"note": "call [REDACTED_PHONE] or mail [REDACTED_EMAIL]"}
            assert names == {}
    finally:
        runner.stop()


async def test_a_screen_past_its_deadline_is_refused() -> None:
    runner = ScreenRunner(WriteFirewall(), process_chars=0, workers=0, deadline_s=1e-9)
    with pytest.raises(FirewallBusy):
        await runner.screen_request(["a." * 50_000], [], [])
