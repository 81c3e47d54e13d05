"""When a failed call is tried again, and after how long: the one policy both clients use.

Retried: 429 and 503 answers (the server took nothing: rate limited, Redis down, the write
firewall busy), and transport failures. A failure before the request was sent (connection
refused, connect timeout) is retried for every call; one after it may have reached the
server (read timeout, dropped connection) only for a call that is safe to send twice: a
read, or a write carrying an `Idempotency-Key`, which the server answers once.

The wait is exponential backoff with full jitter (a random wait up to `backoff_s * 2**n`,
capped), so clients that failed together do not come back together; a `Retry-After` from
the server is honoured as the least wait, and one longer than `max_retry_after_s` is not
waited for (the error is raised, with its `retry_after`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

from pcm_client.errors import ApiError, PcmError, Timeout, TransportError

# Transport failures that happen before any byte of the request left: always safe to retry.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Retry:
    """`attempts`: tries in all (1: never retry)."""

    attempts: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    max_retry_after_s: float = 60.0
    statuses: frozenset[int] = frozenset({429, 503})
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts: at least 1 (the first try)")
        if self.backoff_s < 0 or self.max_backoff_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("backoff_s, max_backoff_s and max_retry_after_s: not negative")

    def backoff(self, tried: int) -> float:
        """A jittered wait after `tried` failed tries (1, 2, ...)."""
        ceiling = min(self.max_backoff_s, self.backoff_s * 2 ** (tried - 1))
        return self.rng.uniform(0, ceiling)

    def wait_after(self, tried: int, error: PcmError, replayable: bool) -> float | None:
        """Seconds to wait before the next try, or None to raise `error` now."""
        if tried >= self.attempts:
            return None
        if isinstance(error, ApiError):
            if error.status not in self.statuses:
                return None
            if error.retry_after is not None:
                if error.retry_after > self.max_retry_after_s:
                    return None
                # Not before the server said; a little jitter spreads the returns.
                return error.retry_after + self.rng.uniform(0, self.backoff_s)
            return self.backoff(tried)
        if isinstance(error, TransportError):
            sent = not isinstance(error.__cause__, NOT_SENT)
            return self.backoff(tried) if replayable or not sent else None
        return None


NO_RETRY = Retry(attempts=1)


def transport_error(exc: httpx.HTTPError, url: str, timeout_s: float | None) -> TransportError:
    """Our exception for httpx's, saying which server and what happened."""
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
        err: TransportError = Timeout(f"PCM at {url} did not answer{limit}")
    else:
        err = TransportError(
            f"cannot reach PCM at {url} ({type(exc).__name__}: {exc}); is it running?"
        )
    err.__cause__ = exc
    return err
