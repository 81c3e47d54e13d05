"""Asking for a memory's reconsolidation (feedback marking it `wrong`): the request goes
on `pcm.memory.reconsolidate`, and the sweeper's `pcm_sweeper.reconsolidation` makes the
memory labile and rewrites it from the newest information that updates it (stored
already, or the next write)."""

from __future__ import annotations

from pcm_common.messaging.events import STREAM_RECONSOLIDATE, ReconsolidationRequested
from pcm_common.ports import EventBus

# The longest `reason` kept: it is logged, never stored in a memory.
MAX_REASON = 200


async def request_reconsolidation(bus: EventBus, tenant: str, memory_id: str, reason: str) -> None:
    """Publish a `ReconsolidationRequested` for the tenant's memory; returns once it is on
    the stream. The caller checks that the memory is the tenant's: the sweeper ignores a
    request for a memory the tenant does not hold."""
    event = ReconsolidationRequested(tenant=tenant, memory_id=memory_id, reason=reason[:MAX_REASON])
    await bus.publish(STREAM_RECONSOLIDATE, event)
