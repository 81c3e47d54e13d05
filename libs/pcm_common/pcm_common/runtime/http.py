"""HTTP pieces every service shares: auth, error shape, size limit, health, metrics, pipeline."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pcm_common.access.auth import Refusal, guard_of
from pcm_common.domain.clock import as_utc, utcnow
from pcm_common.messaging.bus import pipeline_status
from pcm_common.runtime.request_context import RequestContext, bind_tenant
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import REQUEST_LATENCY, get_logger

log = get_logger("http")
_T = TypeVar("_T")

MAX_BODY_BYTES = 8 * 1024 * 1024  # a full 1,000-item batch of ordinary memories fits

_bearer = HTTPBearer(auto_error=False)

ReadinessCheck = Callable[[], Awaitable[dict[str, Any]]]


class ApiError(HTTPException):
    """An error with a stable machine-readable code: `{"error": code, "detail": ...}`."""

    def __init__(
        self, status: int, code: str, detail: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(
            status_code=status, detail={"error": code, "detail": detail}, headers=headers
        )


class ErrorBody(BaseModel):
    """The body of every error answer (`ApiError`, the handlers in `install`, `LimitAndTime`):
    `error`, a stable machine-readable code; `detail`, a message or the validation errors."""

    error: str
    detail: Any = None


_ERRORS = {
    400: "Malformed JSON body (`malformed_json`)",
    401: "No API key, or an unknown, revoked or expired one",
    403: "The key's role may not do this, or the tenant's governance refuses the capture",
    404: "Not found",
    409: "Conflict: already running, or not in a state that allows it",
    413: "Body, text or batch over its limit",
    422: "Invalid request (`invalid_request` and more specific codes)",
    429: "Rate limit or tenant quota reached (Retry-After)",
    500: "Unexpected error (`internal_error`); logged",
    503: "Redis or a store unreachable; retry later (Retry-After)",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` declaring `ErrorBody` answers for these status codes."""
    return {c: {"model": ErrorBody, "description": _ERRORS[c]} for c in codes}


# What any route may answer (the body limit, a NUL in the path or query, an unexpected
# error, Redis down): declared once on the app.
ANY_ROUTE = error_responses(413, 422, 500, 503)
# What a route behind `Tenant` may answer besides: its key refused, or rate limited.
KEYED = error_responses(401, 429)
# What a route reading a JSON body may answer besides.
JSON_BODY = error_responses(400)


def refuse_future(at: datetime | None, ahead_s: float, what: str) -> None:
    """422 when `at` lies more than `ahead_s` past the real clock (`max_future_s`: a write's
    `created_at`, a recall's `now`)."""
    latest = utcnow() + timedelta(seconds=ahead_s)
    if at is not None and as_utc(at) > latest:
        raise ApiError(422, "invalid_request", f"{what} is later than {latest:%Y-%m-%dT%H:%M}Z")


def state_of(request: Request, name: str, kind: type[_T]) -> _T:
    """The `kind` object a component put on the app's state as `name` (Starlette's state
    is untyped, so its type is checked here)."""
    value = getattr(request.app.state, name)
    if not isinstance(value, kind):
        raise TypeError(f"app.state.{name} is a {type(value).__name__}, not {kind.__name__}")
    return value


def resources_of(request: Request) -> Resources:
    return state_of(request, "resources", Resources)


async def tenant_of(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The caller's tenant; also checks the key's role against the route and the rate
    limits (`pcm_common.access.auth`). The key's principal is left on `request.state.principal`."""
    if creds is None or creds.scheme.lower() != "bearer":
        raise ApiError(401, "missing_api_key", "send Authorization: Bearer <key>")
    res = resources_of(request)
    guard = guard_of(request.app.state, res.settings, res.redis)
    route = request.scope.get("route")
    try:
        principal = await guard.admit(
            creds.credentials,
            request.method,
            getattr(route, "path", request.url.path),
            request.path_params,
        )
    except Refusal as r:
        err = ApiError(r.status, r.code, r.detail)
        err.headers = r.headers
        raise err from None
    request.state.tenant = principal.tenant
    request.state.principal = principal
    bind_tenant(principal.tenant)
    return principal.tenant


Tenant = Annotated[str, Depends(tenant_of)]
Res = Annotated[Resources, Depends(resources_of)]


def install(app: FastAPI, service: str) -> None:
    """Error handlers, body-size limit and latency metrics for one service's app."""

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        body = (
            exc.detail
            if isinstance(exc.detail, dict)
            else {"error": _code(exc.status_code), "detail": exc.detail}
        )
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return JSONResponse({"error": "malformed_json", "detail": _safe(errors)}, 400)
        return JSONResponse({"error": "invalid_request", "detail": _safe(errors)}, 422)

    @app.exception_handler(RedisConnectionError)
    @app.exception_handler(RedisTimeoutError)
    async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
        # Redis down or unreachable: the request did not complete, and retrying later is
        # the client's move (writes acknowledged before are durable; /readyz says 503 too).
        log.warning("redis_unavailable", path=request.url.path, error=repr(exc)[:200])
        body = {"error": "unavailable", "detail": "redis is unreachable; retry later"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(OSError)
    async def _store_unavailable(request: Request, exc: Exception) -> JSONResponse:
        # A store's I/O failed (Qdrant Edge's disk, a connection refused, a timeout): the
        # request did not complete, nothing was announced for it (events are published
        # after the store change, `pcm_common.messaging.outbox`), and a retry later may
        # succeed: the 503 a Redis outage gives, not a 500.
        log.warning("store_unavailable", path=request.url.path, error=repr(exc)[:200])
        body = {"error": "unavailable", "detail": "a store is unreachable; retry later"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})

    app.add_middleware(LimitAndTime, service=service)
    # Added last, so outermost: every answer, LimitAndTime's own refusals too, has the id.
    app.add_middleware(RequestContext)


class LimitAndTime:
    """Body-size limit, request latency metric and the last word on errors, as plain ASGI.
    Starlette's `BaseHTTPMiddleware` ran every request through an extra task and memory
    streams (docs/decisions/0046-plain-asgi-middleware.md). A body over
    `MAX_BODY_BYTES` is refused from its declared length, or, sent without one (chunked),
    once it has grown past it. A NUL in the path or query is refused (422). An unexpected
    error is a JSON 500 (`internal_error`) and one raised after the response was sent (a
    background task's) is logged: raised on to the server, either closed the connection
    without `Connection: close`, and the client's next request on it failed."""

    def __init__(self, app: ASGIApp, service: str, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.service = service
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        if _has_nul(scope):
            body = {"error": "invalid_request", "detail": "NUL (%00) in the path or query"}
            await JSONResponse(body, 422)(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        sent = ""  # "", "started", "done": how far the response went
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Raised while FastAPI reads the body, before any endpoint runs: it
                    # answers it through the error handler, and nothing changed.
                    raise ApiError(413, "payload_too_large", self._too_large)
            return message

        async def send_status(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status, sent = message["status"], "started"
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                sent = "done"
            await send(message)

        try:
            await self.app(scope, counted if length is None else receive, send_status)
        except Exception as exc:
            if sent == "started":
                raise  # half a response: only closing the connection ends it
            log.error("request_failed", path=scope.get("path"), sent=bool(sent), error=repr(exc))
            if not sent:
                status = 500
                body = {"error": "internal_error", "detail": "unexpected error; logged"}
                await JSONResponse(body, 500)(scope, receive, send)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", "unmatched")
            REQUEST_LATENCY.labels(self.service, path, scope["method"], str(status)).observe(
                time.perf_counter() - started
            )

    @property
    def _too_large(self) -> str:
        return f"body over {self.max_bytes} bytes"

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {"error": "payload_too_large", "detail": self._too_large}
        await JSONResponse(body, 413)(scope, receive, send)


class Health(BaseModel):
    status: str  # ok | stalled
    stalled: dict[str, float] | None = None  # loop -> seconds since its last beat
    stall_after_s: float | None = None


class Readiness(BaseModel):
    ready: bool
    checks: dict[str, Any]


def ops_router(checks: dict[str, ReadinessCheck]) -> APIRouter:
    """/healthz (process alive), /readyz (dependencies answer), /metrics, /v1/pipeline."""
    router = APIRouter()

    @router.get(
        "/healthz",
        tags=["ops"],
        responses={
            200: {"model": Health},
            503: {"model": Health, "description": "A consumer loop or the scheduler stalled"},
        },
    )
    async def healthz(res: Res) -> JSONResponse:
        return _liveness(res)

    @router.get(
        "/readyz",
        tags=["ops"],
        responses={
            200: {"model": Readiness},
            503: {"model": Readiness, "description": "A dependency does not answer"},
        },
    )
    async def readyz() -> JSONResponse:
        return await _readiness(checks)

    @router.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
    async def metrics(res: Res) -> Response:
        # Stream lag is read at scrape time so autoscalers never act on a stale value.
        with contextlib.suppress(Exception):
            await pipeline_status(res.redis)
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    @router.get("/v1/pipeline", tags=["ops"])
    async def pipeline(res: Res) -> dict[str, Any]:
        # No key, like the other ops routes (DESIGN §4 lists it with them, and clients wait
        # on it): the counts are the whole pipeline's, with no tenant's names or data, the
        # same numbers /metrics gives its scraper.
        # `indexing`: this process's embedded shard is building its index (in a child
        # process, so the pipeline may be settled meanwhile).
        return {**await pipeline_status(res.redis), "indexing": res.indexing}

    return router


def _liveness(res: Resources) -> JSONResponse:
    """Liveness: the process answers, and every loop it runs has beaten within the bound
    (`pcm_common.runtime.heartbeats`); a stalled one is named with its silence in seconds."""
    stalled = res.heartbeats.stalled()
    if not stalled:
        return JSONResponse({"status": "ok"})
    body = {
        "status": "stalled",
        "stalled": stalled,
        "stall_after_s": res.settings.stall_after_s,
    }
    return JSONResponse(body, status_code=503)


async def _readiness(checks: dict[str, ReadinessCheck]) -> JSONResponse:
    """Every readiness check's report; ready when none failed or said it is not ok."""
    report: dict[str, Any] = {}
    ok = True
    for name, check in checks.items():
        try:
            report[name] = await check()
        except Exception as exc:
            ok = False
            report[name] = {"ok": False, "error": repr(exc)}
        else:
            ok = ok and bool(report[name].get("ok", True))
    return JSONResponse({"ready": ok, "checks": report}, status_code=200 if ok else 503)


def _has_nul(scope: Scope) -> bool:
    raw = scope.get("raw_path") or b""
    return "\x00" in scope.get("path", "") or b"%00" in raw or b"%00" in scope["query_string"]


def _code(status: int) -> str:
    return {
        # FastAPI's own 400 is a body it could not parse past the JSON decoder (nesting
        # deeper than the decoder's recursion limit).
        400: "malformed_json",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        413: "payload_too_large",
    }.get(status, "error")


def _safe(errors: Any) -> list[dict[str, Any]]:
    # Echo locations and messages, never the (possibly huge or secret) input values.
    return [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in errors
    ]
