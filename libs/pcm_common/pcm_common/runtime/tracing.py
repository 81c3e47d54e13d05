"""OpenTelemetry tracing: one write is one trace, from its HTTP request through every stream
consumer that handles its events (ingest, graph-extractor, sweeper).

The trace context crosses the streams in the events themselves (`Event.trace`, the W3C
`traceparent`/`tracestate` pair), as the request id does: a consumer opens its span as a
child of the context the event carries, and the events it derives carry the consumer's span.

Off by default (`PCM_TRACE_EXPORTER=none`): no provider is made, spans are the API's
no-op ones, and events carry no context. This module keeps its own provider instead of
setting OpenTelemetry's global one, so that a library instrumenting itself from the global
provider (FastAPI's native telemetry among them) stays off unless an operator sets it up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from pcm_common.runtime.telemetry import get_logger

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from pcm_common.runtime.config import PcmSettings

log = get_logger("tracing")

_PROPAGATOR = TraceContextTextMapPropagator()
_NOOP = trace.NoOpTracer()
_provider: TracerProvider | None = None
_tracer: Tracer = _NOOP


def configure_tracing(settings: PcmSettings, service: str) -> None:
    """Make the process's provider from the `PCM_TRACE_*` settings (once per process: the
    first app built wins, as the all-in-one server builds one for all its services)."""
    if _provider is not None or settings.trace_exporter == "none":
        return
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    exporter: SpanExporter
    if settings.trace_exporter == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:  # the optional extra is not installed
            raise RuntimeError(
                "PCM_TRACE_EXPORTER=otlp needs the OTLP exporter: install pcm-common[otlp] "
                "(uv sync --extra otlp)"
            ) from exc
        exporter = OTLPSpanExporter(endpoint=settings.trace_endpoint or None)
    else:
        exporter = ConsoleSpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.trace_service_name or f"pcm-{service}"}),
        # A sampled parent is followed: a trace is kept or dropped as a whole.
        sampler=ParentBased(TraceIdRatioBased(settings.trace_sample_ratio)),
    )
    provider.add_span_processor(BatchSpanProcessor(exporter))
    use_provider(provider)
    log.info("tracing_configured", exporter=settings.trace_exporter, service=service)


def use_provider(provider: TracerProvider | None) -> None:
    """Set (or with None, drop) the provider spans are made by: tests pass one with an
    in-memory exporter."""
    global _provider, _tracer
    _provider = provider
    _tracer = provider.get_tracer("pcm") if provider is not None else _NOOP


def flush(timeout_ms: int = 5_000) -> None:
    """Export the spans still queued (when a service stops: its last spans would be lost)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


def enabled() -> bool:
    return _provider is not None


def current_carrier() -> dict[str, str] | None:
    """The current span's context as event fields (`traceparent`, `tracestate`); None when
    nothing is traced, so an event of an untraced process carries nothing."""
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    out: dict[str, str] = {}
    _PROPAGATOR.inject(out)
    return out or None


def carrier_of(span: Span) -> dict[str, str] | None:
    """`span`'s context as event fields: for events derived from one event of a batch."""
    if not span.get_span_context().is_valid:
        return None
    out: dict[str, str] = {}
    _PROPAGATOR.inject(out, context=trace.set_span_in_context(span))
    return out or None


def context_of(carrier: Mapping[str, str] | None) -> Context | None:
    """The parent context an event or request carries (None: a new trace)."""
    if not carrier:
        return None
    return _PROPAGATOR.extract(dict(carrier))


@contextlib.contextmanager
def server_span(
    name: str, headers: Mapping[str, str], attributes: Mapping[str, Any]
) -> Iterator[Span]:
    """The current span of an HTTP request, continuing a trace the caller sent."""
    with _tracer.start_as_current_span(
        name,
        context=context_of(headers),
        kind=SpanKind.SERVER,
        attributes=dict(attributes),
        record_exception=False,
        set_status_on_exception=True,
    ) as span:
        yield span


@contextlib.contextmanager
def consumer_span(
    stream: str, group: str, carrier: Mapping[str, str] | None, **attributes: Any
) -> Iterator[Span]:
    """The current span of one event's handling, a child of the context it carries."""
    with _tracer.start_as_current_span(
        f"{stream} process",
        context=context_of(carrier),
        kind=SpanKind.CONSUMER,
        attributes=_attrs(stream, group, attributes),
    ) as span:
        yield span


def start_consumer_span(
    stream: str, group: str, carrier: Mapping[str, str] | None, **attributes: Any
) -> Span:
    """`consumer_span` for a batch: one per event, started together, ended by the caller
    (`end_consumer_span`) once the batch's outcome for the event is known."""
    return _tracer.start_span(
        f"{stream} process",
        context=context_of(carrier),
        kind=SpanKind.CONSUMER,
        attributes=_attrs(stream, group, attributes),
    )


def end_consumer_span(span: Span, outcome: BaseException | None) -> None:
    if outcome is not None:
        span.set_status(Status(StatusCode.ERROR, repr(outcome)[:200]))
    span.end()


def _attrs(stream: str, group: str, more: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "messaging.system": "redis",
        "messaging.destination.name": stream,
        "messaging.consumer.group.name": group,
    }
    out.update({f"pcm.{k}": v for k, v in more.items() if v is not None})
    return out
