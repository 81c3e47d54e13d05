"""Issue 39: one write is one trace, from its HTTP request through the graph-extractor and the
sweeper, its context carried in the events' `trace` field. Spans go to the SDK's in-memory
exporter; a real all-in-one server (Redis, Qdrant Edge, the graph server) handles the write."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pcm_cli.testing import running_server, settle
from pcm_common.messaging.events import (
    GROUP_GRAPH,
    GROUP_SWEEPER_GRAPH,
    GROUP_SWEEPER_WRITTEN,
    STREAM_EXTRACTED,
    STREAM_WRITTEN,
)
from pcm_common.runtime import tracing
from tests.conftest import TEST_REDIS, service_env

# A trace the caller started: the server's spans continue it.
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{CALLER_TRACE}-00f067aa0ba902b7-01"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    saved = dict(os.environ)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)
    os.environ.clear()
    os.environ.update(saved)


def _group(span: ReadableSpan) -> str | None:
    value = (span.attributes or {}).get("messaging.consumer.group.name")
    return str(value) if value is not None else None


async def test_one_write_is_one_trace_through_ingest_extractor_and_sweeper(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    env = service_env(tmp_path, f"{TEST_REDIS}/13")
    async with running_server(env) as url:
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": "Bearer key-a"}, timeout=60
        ) as c:
            r = await c.post(
                "/v1/memories",
                json={"text": "Ingrid moved to Trondheim to work for Equinor in May."},
                headers={"traceparent": TRACEPARENT},
            )
            assert r.status_code == 201, r.text
            memory_id = r.json()["id"]
            await settle(c)

    finished = spans.get_finished_spans()
    http = [s for s in finished if s.name == "POST /v1/memories"]
    assert len(http) == 1
    (request,) = http
    assert format(request.context.trace_id, "032x") == CALLER_TRACE
    assert (request.attributes or {}).get("http.route") == "/v1/memories"
    assert (request.attributes or {}).get("http.response.status_code") == 201

    of_write = [s for s in finished if (s.attributes or {}).get("pcm.memory_id") == memory_id]
    by_group = {(s.name, _group(s)): s for s in of_write}
    extractor = by_group[(f"{STREAM_WRITTEN} process", GROUP_GRAPH)]
    sweeper_written = by_group[(f"{STREAM_WRITTEN} process", GROUP_SWEEPER_WRITTEN)]
    sweeper_graph = by_group[(f"{STREAM_EXTRACTED} process", GROUP_SWEEPER_GRAPH)]
    for span in (extractor, sweeper_written, sweeper_graph):
        assert span.context.trace_id == request.context.trace_id, span.name
        assert span.status.is_ok
    # The chain: the request's span is the parent of both consumers of its event, and the
    # extractor's span the parent of the sweeper's handling of what it extracted.
    assert extractor.parent is not None and extractor.parent.span_id == request.context.span_id
    assert sweeper_written.parent is not None
    assert sweeper_written.parent.span_id == request.context.span_id
    assert sweeper_graph.parent is not None
    assert sweeper_graph.parent.span_id == extractor.context.span_id
