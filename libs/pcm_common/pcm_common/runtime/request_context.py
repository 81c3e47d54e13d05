"""The request id: taken from `X-Request-ID` or made, returned on every response, bound into
every log line written while serving the request, carried by the events it publishes and
bound again by the consumers that handle them (one id from the HTTP call to the graph).

`RequestContext` is plain ASGI (like `http.LimitAndTime`, which it wraps), so errors
answered anywhere inside, a refused body included, carry the header too; it also writes
the access log line.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import structlog
from opentelemetry.trace import Span, StatusCode
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pcm_common.runtime import tracing
from pcm_common.runtime.telemetry import get_logger

HEADER = "X-Request-ID"
# Short and printable, no spaces: an id a client sends is echoed into headers and logs, so
# anything longer or with control characters is replaced by one made here.
_VALID = re.compile(r"[\x21-\x7e]{1,128}")
# Probes and scrapes every few seconds would bury the API's access lines at INFO.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# A batch of events from more requests than this binds only the first ones' ids.
_MAX_BATCH_IDS = 20

REQUEST_ID: ContextVar[str | None] = ContextVar("pcm_request_id", default=None)

log = get_logger("access")


def current_request_id() -> str | None:
    """The id of the request (or event) being served by this task, if any."""
    return REQUEST_ID.get()


def accepted_request_id(sent: str | None) -> str:
    """The client's id when it is short and printable, else a new one."""
    if sent is not None and _VALID.fullmatch(sent):
        return sent
    return uuid.uuid4().hex


@contextlib.contextmanager
def bound_request(request_id: str | None, **more: Any) -> Iterator[None]:
    """Bind a request id (and e.g. the tenant) for the log lines and events of the block;
    restored after it, so a consumer's loop never keeps one event's id for the next."""
    token = REQUEST_ID.set(request_id)
    fields = {k: v for k, v in {"request_id": request_id, **more}.items() if v is not None}
    try:
        with structlog.contextvars.bound_contextvars(**fields):
            yield
    finally:
        REQUEST_ID.reset(token)


@contextlib.contextmanager
def bound_batch(ids: Sequence[str | None]) -> Iterator[None]:
    """For a batch of events: one id when they all came from one request (a write, a batch
    write), else the list of their ids on each log line (events carry no id then)."""
    distinct = list(dict.fromkeys(i for i in ids if i))
    if len(distinct) == 1:
        with bound_request(distinct[0]):
            yield
    elif distinct:
        with structlog.contextvars.bound_contextvars(request_ids=distinct[:_MAX_BATCH_IDS]):
            yield
    else:
        yield


def bind_tenant(tenant: str) -> None:
    """Once the key is known, every later line of the request names its tenant."""
    structlog.contextvars.bind_contextvars(tenant=tenant)


class RequestContext:
    """Outermost middleware: request id in, out and in the logs; one access line per
    request (method, path without its query string, status, duration; never a body)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = accepted_request_id(Headers(scope=scope).get(HEADER))
        raw_id = request_id.encode()
        started = time.perf_counter()
        status = 500

        async def with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"
                ]
                message = {**message, "headers": [*headers, (b"x-request-id", raw_id)]}
            await send(message)

        # Nothing of an earlier request on this connection's context may leak into this one.
        structlog.contextvars.clear_contextvars()
        path = scope.get("path", "")
        method = scope.get("method", "")
        # Probes and scrapes are not traced: they would be most of the spans.
        span_cm = (
            tracing.server_span(
                method,
                _header_map(scope),
                {"http.request.method": method, "url.path": path, "pcm.request_id": request_id},
            )
            if tracing.enabled() and path not in QUIET_PATHS
            else contextlib.nullcontext(None)
        )
        with bound_request(request_id), span_cm as span:
            if span is not None:
                structlog.contextvars.bind_contextvars(
                    trace_id=format(span.get_span_context().trace_id, "032x")
                )
            try:
                await self.app(scope, receive, with_id)
            finally:
                if span is not None:
                    _name_span(span, scope, method, status)
                line = log.debug if path in QUIET_PATHS else log.info
                line(
                    "http_request",
                    method=method,
                    path=path,
                    status=status,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                )


def _header_map(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the trace context propagator's carrier)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _name_span(span: Span, scope: Scope, method: str, status: int) -> None:
    """Name the span by its route template once routing found it (never by the path: ids
    in paths would make every span name unique)."""
    route = getattr(scope.get("route"), "path", None)
    if route:
        span.update_name(f"{method} {route}")
        span.set_attribute("http.route", route)
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(StatusCode.ERROR)
