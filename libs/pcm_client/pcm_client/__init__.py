"""PCM's HTTP API as a typed client: `PcmClient` (blocking) and `AsyncPcmClient` (asyncio),
each over one pooled httpx connection, with retries, timeouts and one exception class per
kind of error (`pcm_client.errors`). Depends on httpx and pydantic only.

    from pcm_client import PcmClient

    with PcmClient("http://127.0.0.1:8080", "pcm-dev-key") as pcm:
        stored = pcm.store("Alice moved to Berlin in March.")
        print(pcm.recall("Where does Alice live now?").prompt)
"""

from pcm_client.async_client import AsyncPcmClient
from pcm_client.base import DEFAULT_URL, DEV_KEY
from pcm_client.calls import LIST_MAX
from pcm_client.errors import (
    ApiError,
    BadRequest,
    CaptureRefused,
    Conflict,
    ErasureRunning,
    Forbidden,
    JobRunning,
    NotFound,
    OperatorOnly,
    PayloadTooLarge,
    PcmError,
    RateLimited,
    ReembedRunning,
    SecretDetected,
    ServerError,
    Timeout,
    TransportError,
    Unauthorized,
    Unavailable,
    ValidationError,
)
from pcm_client.models import (
    AnomalyFlag,
    BatchOut,
    ContextItem,
    ErasureOut,
    FeedbackOut,
    ImportOut,
    JobResult,
    JobRun,
    JobRuns,
    JobRunsOut,
    Memory,
    MemoryHistory,
    MemoryIn,
    MemoryPage,
    Readiness,
    RecallOut,
    ReembedOut,
    ScoreTerms,
    StoreResult,
)
from pcm_client.retry import NO_RETRY, Retry
from pcm_client.sync_client import PcmClient

__all__ = [
    "DEFAULT_URL",
    "DEV_KEY",
    "LIST_MAX",
    "NO_RETRY",
    "AnomalyFlag",
    "ApiError",
    "AsyncPcmClient",
    "BadRequest",
    "BatchOut",
    "CaptureRefused",
    "Conflict",
    "ContextItem",
    "ErasureOut",
    "ErasureRunning",
    "FeedbackOut",
    "Forbidden",
    "ImportOut",
    "JobResult",
    "JobRun",
    "JobRunning",
    "JobRuns",
    "JobRunsOut",
    "Memory",
    "MemoryHistory",
    "MemoryIn",
    "MemoryPage",
    "NotFound",
    "OperatorOnly",
    "PayloadTooLarge",
    "PcmClient",
    "PcmError",
    "RateLimited",
    "Readiness",
    "RecallOut",
    "ReembedOut",
    "ReembedRunning",
    "Retry",
    "ScoreTerms",
    "SecretDetected",
    "ServerError",
    "StoreResult",
    "Timeout",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "ValidationError",
]
