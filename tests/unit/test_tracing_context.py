"""The trace context an event carries (`Event.trace`): none while tracing is off, the
current span's W3C context when on, and a consumer span made from it joins that trace."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pcm_common.messaging.events import MemoryWritten
from pcm_common.runtime import tracing


def _event() -> MemoryWritten:
    return MemoryWritten(
        tenant="t", memory_id="m1", text="x", created_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    out = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(out))
    tracing.use_provider(provider)
    yield out
    tracing.use_provider(None)


def test_off_by_default_events_carry_no_context() -> None:
    assert not tracing.enabled()
    with tracing.server_span("POST /x", {}, {}):
        assert _event().trace is None


def test_an_event_made_in_a_span_carries_it_and_its_consumer_continues_it(
    exporter: InMemorySpanExporter,
) -> None:
    with tracing.server_span("POST /v1/memories", {}, {}) as request:
        event = _event()
    assert event.trace is not None and event.trace["traceparent"].startswith("00-")
    # Through JSON, as on the stream.
    body = MemoryWritten.model_validate_json(event.model_dump_json())
    with tracing.consumer_span("pcm.memory.written", "graph-extractor", body.trace) as span:
        derived = _event()
    batch = tracing.start_consumer_span("pcm.memory.written", "sweeper-written", body.trace)
    tracing.end_consumer_span(batch, RuntimeError("boom"))
    trace_id = request.get_span_context().trace_id
    assert span.get_span_context().trace_id == trace_id
    assert batch.get_span_context().trace_id == trace_id
    assert derived.trace == tracing.carrier_of(span)
    finished = {
        s.name + "/" + str((s.attributes or {}).get("messaging.consumer.group.name")): s
        for s in exporter.get_finished_spans()
    }
    failed = finished["pcm.memory.written process/sweeper-written"]
    assert not failed.status.is_ok


def test_a_caller_s_traceparent_is_continued(exporter: InMemorySpanExporter) -> None:
    sent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with tracing.server_span("GET /x", {"traceparent": sent}, {}) as span:
        pass
    ctx = span.get_span_context()
    assert format(ctx.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert tracing.context_of(None) is None


def test_the_settings_make_the_provider_once_and_otlp_needs_its_extra() -> None:
    from pcm_common.runtime.config import PcmSettings

    try:
        tracing.configure_tracing(PcmSettings(), "ingest")
        assert not tracing.enabled()  # off by default
        tracing.configure_tracing(
            PcmSettings(trace_exporter="console", trace_sample_ratio=0.5), "ingest"
        )
        assert tracing.enabled()
    finally:
        tracing.use_provider(None)
    try:
        import opentelemetry.exporter.otlp.proto.http  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="otlp"):
            tracing.configure_tracing(PcmSettings(trace_exporter="otlp"), "ingest")
    else:
        try:
            tracing.configure_tracing(
                PcmSettings(trace_exporter="otlp", trace_endpoint="http://127.0.0.1:1/v1/traces"),
                "ingest",
            )
            assert tracing.enabled()
        finally:
            tracing.use_provider(None)
