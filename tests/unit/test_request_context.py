"""Request ids: what a client may send, and events carrying the id of the request that
made them (optional, so events from before it still parse)."""

from __future__ import annotations

from datetime import UTC, datetime

from pcm_common.messaging.events import MemoryChanged, MemoryWritten
from pcm_common.runtime.request_context import accepted_request_id, bound_batch, bound_request


def test_a_short_printable_id_is_kept_anything_else_replaced() -> None:
    assert accepted_request_id("req-42:a/b") == "req-42:a/b"
    for bad in (None, "", "a b", "x" * 129, "tab\there", "caf\u00e9", "nl\n"):
        made = accepted_request_id(bad)
        assert made != bad and len(made) == 32 and int(made, 16) >= 0


def test_events_take_the_bound_id_and_old_events_still_parse() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with bound_request("r-1", tenant="t"):
        made = MemoryChanged(tenant="t", memory_id="m", change="pinned")
    assert made.request_id == "r-1"
    # Outside any request (a scheduled job) there is none; nothing leaks from the block.
    assert MemoryChanged(tenant="t", memory_id="m", change="pinned").request_id is None
    old = {"tenant": "t", "memory_id": "m", "text": "x", "created_at": at.isoformat()}
    assert MemoryWritten.model_validate(old).request_id is None
    body = MemoryWritten.model_validate(old | {"request_id": "r-2"}).model_dump(mode="json")
    assert body["request_id"] == "r-2"


def test_a_batch_of_one_request_binds_its_id_a_mixed_one_none() -> None:
    with bound_batch(["r-9", "r-9", None]):
        assert MemoryChanged(tenant="t", memory_id="m", change="pinned").request_id == "r-9"
    with bound_batch(["r-1", "r-2"]):
        assert MemoryChanged(tenant="t", memory_id="m", change="pinned").request_id is None
