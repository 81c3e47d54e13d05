"""What the sync and the async client share: where the server is, the key, the timeout and
retry settings, how a `Call` becomes an httpx request, and how its answer is read."""

from __future__ import annotations

import os
from typing import Any, TypeVar

import httpx
import pydantic

from pcm_client.calls import Call
from pcm_client.errors import PcmError, error_of
from pcm_client.retry import Retry

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8080"
DEV_KEY = "pcm-dev-key"  # what `make run` / `pcm dev` accept on a development machine
DEFAULT_TIMEOUT_S = 30.0
USER_AGENT = "pcm-client/0.1"


class ClientBase:
    """`url` and `api_key` default to PCM_URL and PCM_API_KEY, then to a local dev server
    (`http://127.0.0.1:8080`, `pcm-dev-key`). `timeout`: seconds per try of a call (the
    methods that may wait long take their own, `timeout_s`). `retry`: when to try again
    (`pcm_client.retry`); `NO_RETRY` never does."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: Retry | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = (url or os.environ.get("PCM_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key or os.environ.get("PCM_API_KEY") or DEV_KEY
        self.timeout = timeout
        self.retry = retry if retry is not None else Retry()
        self.headers = {
            "Authorization": f"Bearer {self.api_key}",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }

    def _request(self, call: Call[Any], timeout_s: float | None) -> dict[str, Any]:
        """The keyword arguments of httpx's `request` for one try of `call`."""
        return {
            "method": call.method,
            "url": call.path,
            "json": call.json,
            "content": call.content,
            "params": call.params,
            "headers": call.headers,
            "timeout": self._limit(timeout_s),
        }

    def _limit(self, timeout_s: float | None) -> float:
        return self.timeout if timeout_s is None else timeout_s

    def _answer(self, call: Call[T], response: httpx.Response) -> T:
        """The call's result, or the error it answered (raised)."""
        if response.status_code >= 400 and response.status_code not in call.accepted:
            raise error_of(response)
        try:
            return call.read(response)
        except (ValueError, pydantic.ValidationError) as exc:
            # A 2xx body this client cannot read: another server on the port, or a PCM
            # whose answer changed incompatibly.
            raise PcmError(
                f"unexpected answer from {self.url}{call.path} "
                f"({response.status_code}): {str(exc)[:300]}"
            ) from exc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"
