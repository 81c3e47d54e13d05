"""What a failed call raises: one class per kind of refusal, chosen by the error code in
the server's body (`{"error": code, "detail": ...}`, DESIGN §4), else by the status.

    PcmError                      every failure of this client
    ├── ApiError                  PCM answered with an error (status, code, detail set)
    │   ├── BadRequest            400 malformed_json
    │   ├── Unauthorized          401 missing_api_key, unknown_api_key
    │   ├── Forbidden             403 forbidden (a data key on an admin route)
    │   │   ├── CaptureRefused    403 capture_refused (the scope keeps hook captures only)
    │   │   └── OperatorOnly      403 operator_only (re-embedding: PCM_OPERATOR_KEYS only)
    │   ├── NotFound              404 memory_not_found, policy_not_found, unknown_job, ...
    │   ├── Conflict              409 key_not_active, idempotency_key_in_progress
    │   │   ├── JobRunning        409 job_running
    │   │   └── ReembedRunning    409 reembed_running
    │   ├── PayloadTooLarge       413 payload_too_large, text_too_large, batch_too_large
    │   ├── ValidationError       422 invalid_request, invalid_scope, idempotency_key_reused
    │   │   └── SecretDetected    422 secret_detected (nothing was stored)
    │   ├── RateLimited           429 rate_limited (`retry_after`)
    │   └── ServerError           5xx
    │       └── Unavailable       503 (Redis down, firewall busy; `retry_after`)
    └── TransportError            no answer: not reachable, or timed out (status None)
        └── Timeout

`ValidationError` is the server's 422, not pydantic's class of the same name.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class PcmError(Exception):
    """A call that failed. `status` and `code` are set when PCM answered (e.g. 422 and
    `secret_detected`); both are None when it could not be reached."""

    status: int | None = None
    code: str | None = None
    detail: Any = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TransportError(PcmError):
    """No answer: the server is not reachable at the URL, or the connection broke."""


class Timeout(TransportError):
    """The server did not answer within the call's timeout."""


class ApiError(PcmError):
    """PCM answered with an error status; `code` is its stable error code."""

    def __init__(
        self,
        status: int,
        code: str | None,
        detail: Any = None,
        *,
        retry_after: float | None = None,
        body: str = "",
    ) -> None:
        described = _detail_text(detail) if code else body[:300]
        head = f"{status} {code}" if code else str(status)
        super().__init__(f"{head}: {described}" if described else head)
        self.status = status
        self.code = code
        self.detail = detail
        self.retry_after = retry_after


class BadRequest(ApiError):
    pass


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    pass


class CaptureRefused(Forbidden):
    pass


class OperatorOnly(Forbidden):
    """A route over every tenant's data (re-embedding) called with a key that is not an
    operator's: a tenant's admin key too."""


class NotFound(ApiError):
    pass


class Conflict(ApiError):
    pass


class JobRunning(Conflict):
    pass


class ErasureRunning(Conflict):
    pass


class ReembedRunning(Conflict):
    pass


class PayloadTooLarge(ApiError):
    pass


class ValidationError(ApiError):
    pass


class SecretDetected(ValidationError):
    pass


class RateLimited(ApiError):
    pass


class ServerError(ApiError):
    pass


class Unavailable(ServerError):
    pass


BY_CODE: dict[str, type[ApiError]] = {
    "malformed_json": BadRequest,
    "missing_api_key": Unauthorized,
    "unknown_api_key": Unauthorized,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "capture_refused": CaptureRefused,
    "operator_only": OperatorOnly,
    "not_found": NotFound,
    "memory_not_found": NotFound,
    "policy_not_found": NotFound,
    "recall_not_found": NotFound,
    "unknown_job": NotFound,
    "job_running": JobRunning,
    "erasure_running": ErasureRunning,
    "reembed_running": ReembedRunning,
    "reembed_needs_one_process": Conflict,
    "key_not_active": Conflict,
    "idempotency_key_in_progress": Conflict,
    "payload_too_large": PayloadTooLarge,
    "text_too_large": PayloadTooLarge,
    "batch_too_large": PayloadTooLarge,
    "invalid_request": ValidationError,
    "invalid_scope": ValidationError,
    "invalid_import": ValidationError,
    "invalid_feedback": ValidationError,
    "unknown_model": ValidationError,
    "idempotency_key_reused": ValidationError,
    "secret_detected": SecretDetected,
    "rate_limited": RateLimited,
}
# A code this client does not know yet falls back on its status.
BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: ValidationError,
    429: RateLimited,
    503: Unavailable,
}


def _detail_text(detail: Any) -> str:
    if detail is None:
        return ""
    if isinstance(detail, str):
        return detail
    return json.dumps(detail, default=str)


def retry_after_s(response: httpx.Response, now: datetime | None = None) -> float | None:
    """The `Retry-After` header in seconds (it may be seconds or an HTTP date), or None."""
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def error_of(response: httpx.Response) -> ApiError:
    """The exception for an error answer: by its code, else by its status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    code: str | None = None
    detail: Any = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        code, detail = body["error"], body.get("detail")
    status = response.status_code
    cls = BY_CODE.get(code or "") or BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ApiError
    return cls(status, code, detail, retry_after=retry_after_s(response), body=response.text)
