"""A client of PCM's HTTP API (DESIGN §4), shared by the MCP server, the `pcm` client
commands and the Claude Code hooks, so the three send the same requests and read the same
answers.

It is deliberately light to import (httpx only): a hook starts a fresh process for every
event, and the agent waits for it.

    api = PcmApi.from_env()            # PCM_URL, PCM_API_KEY
    await api.store("Deploys go out on Tuesdays.", scope="project", project="shop")
    (await api.recall("when do we deploy?", project="shop"))["prompt"]

A refused request raises `PcmError` (or the subclass the caller asked for with
`raising`) carrying PCM's error code, e.g. `secret_detected`; a server that cannot be
reached raises it too, without a code.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:8080"
DEV_KEY = "pcm-dev-key"
LIST_MAX = 500


class PcmError(Exception):
    """A request PCM refused (`status` and `code` set, e.g. 422 secret_detected) or could
    not take (`status` None: unreachable, timed out)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        detail: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.detail = detail


def _detail_text(detail: Any) -> str:
    if detail is None:
        return ""
    if isinstance(detail, str):
        return detail
    return json.dumps(detail, default=str)


def scope_fields(
    user_id: str | None = None, workspace: str | None = None, project: str | None = None
) -> dict[str, Any]:
    """The non-empty ones of user_id, workspace and project, as request fields."""
    out: dict[str, Any] = {}
    if user_id:
        out["user_id"] = user_id
    if workspace:
        out["workspace"] = workspace
    if project:
        out["project"] = project
    return out


class PcmApi:
    """PCM's HTTP API as async calls; every non-2xx answer becomes `self.error`."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        key: str = DEV_KEY,
        *,
        timeout: float = 60.0,
        error: type[PcmError] = PcmError,
    ) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.error = error

    @classmethod
    def from_env(cls, *, timeout: float = 60.0) -> PcmApi:
        return cls(
            os.environ.get("PCM_URL") or DEFAULT_URL,
            os.environ.get("PCM_API_KEY") or DEV_KEY,
            timeout=timeout,
        )

    def raising(self, error: type[PcmError]) -> PcmApi:
        """The same client, raising `error` (a `PcmError` subclass) instead."""
        return type(self)(self.url, self.key, timeout=self.timeout, error=error)

    async def call(
        self, method: str, path: str, *, timeout_s: float | None = None, **kw: Any
    ) -> Any:
        headers = {"Authorization": f"Bearer {self.key}"}
        limit = self.timeout if timeout_s is None else timeout_s
        try:
            async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=limit) as c:
                r = await c.request(method, path, **kw)
        except httpx.TimeoutException:
            raise self.error(f"PCM at {self.url} did not answer within {limit:g} s") from None
        except httpx.HTTPError as exc:
            raise self.error(
                f"cannot reach PCM at {self.url} ({type(exc).__name__}: {exc}); is it running? "
                "(`pcm dev` or `make run`; PCM_URL names the server)"
            ) from None
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = None
            if isinstance(body, dict) and "error" in body:
                code, detail = str(body["error"]), body.get("detail")
                raise self.error(
                    f"{r.status_code} {code}: {_detail_text(detail)}".rstrip(": "),
                    status=r.status_code,
                    code=code,
                    detail=detail,
                )
            raise self.error(f"{r.status_code}: {r.text[:300]}", status=r.status_code)
        return r.json() if r.content else None

    # ---- memories --------------------------------------------------------------------------

    async def store(
        self,
        text: str,
        *,
        source: str,
        scope: str | None = None,
        workspace: str | None = None,
        project: str | None = None,
        user_id: str | None = None,
        importance: str | None = None,
        pinned: bool = False,
        episode: str | None = None,
        metadata: dict[str, Any] | None = None,
        created_at: datetime | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """`{id, status}`: created, reinforced, merged or redacted; or, for an automatic
        capture the server declines, `{id: null, status: "skipped", reason}`."""
        # Without a scope the server stores it in the narrowest one named (`MemoryIn`).
        body: dict[str, Any] = {"text": text, "source": source}
        if scope:
            body["scope"] = scope
        body |= scope_fields(user_id, workspace, project)
        if importance:
            body["importance"] = importance
        if pinned:
            body["pinned"] = True
        if episode:
            body["episode"] = episode
        if metadata:
            body["metadata"] = metadata
        if created_at:
            body["created_at"] = created_at.isoformat()
        result: dict[str, Any] = await self.call(
            "POST", "/v1/memories", json=body, timeout_s=timeout_s
        )
        return result

    async def recall(
        self,
        query: str,
        *,
        k: int | None = None,
        compact: bool = False,
        workspace: str | None = None,
        project: str | None = None,
        user_id: str | None = None,
        include_archived: bool = False,
        created_before: datetime | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """The whole recall answer: the slots as JSON and the rendered `prompt`."""
        body: dict[str, Any] = {"query": query, "compact": compact}
        body |= scope_fields(user_id, workspace, project)
        if k is not None:
            body["k"] = k
        if include_archived:
            body["include_archived"] = True
        if created_before:
            body["created_before"] = created_before.isoformat()
        result: dict[str, Any] = await self.call(
            "POST", "/v1/recall", json=body, timeout_s=timeout_s
        )
        return result

    async def pin(self, memory_id: str, pinned: bool = True) -> dict[str, Any]:
        result: dict[str, Any] = await self.call(
            "PATCH", f"/v1/memories/{memory_id}", json={"pinned": pinned}
        )
        return result

    async def forget(self, memory_id: str) -> None:
        await self.call("DELETE", f"/v1/memories/{memory_id}")

    async def inspect(self, memory_id: str) -> dict[str, Any]:
        """The memory whole, with its version history under `history`."""
        memory: dict[str, Any] = await self.call("GET", f"/v1/memories/{memory_id}")
        memory["history"] = await self.call("GET", f"/v1/memories/{memory_id}/history")
        return memory

    async def list_memories(
        self,
        *,
        scope: str | None = None,
        workspace: str | None = None,
        project: str | None = None,
        state: str | None = None,
        pinned: bool | None = None,
        user_id: str | None = None,
        limit: int = 50,
        offset: str | None = None,
    ) -> dict[str, Any]:
        """One page `{items, next_offset}`; pass `next_offset` back as `offset`."""
        params: dict[str, Any] = {"limit": max(1, min(limit, LIST_MAX))}
        for name, value in (
            ("scope", scope),
            ("workspace", workspace),
            ("project", project),
            ("state", state),
            ("user_id", user_id),
            ("offset", offset),
        ):
            if value is not None:
                params[name] = value
        if pinned is not None:
            params["pinned"] = str(pinned).lower()
        result: dict[str, Any] = await self.call("GET", "/v1/memories", params=params)
        return result

    # ---- governance ------------------------------------------------------------------------

    async def policies(
        self, scope: str | None = None, workspace: str | None = None, project: str | None = None
    ) -> dict[str, Any]:
        """`{policies: [...]}`, and with `scope` the policy in force there (`effective`)."""
        params = ({"scope": scope} if scope else {}) | scope_fields(
            workspace=workspace, project=project
        )
        result: dict[str, Any] = await self.call("GET", "/v1/governance", params=params)
        return result

    async def set_policy(self, policy: dict[str, Any]) -> dict[str, Any]:
        """Replace one scope's policy: `{scope, workspace?, project?, capture_mode?,
        retention_days?, max_memories?}`."""
        result: dict[str, Any] = await self.call("PUT", "/v1/governance", json=policy)
        return result

    async def clear_policy(
        self, scope: str, workspace: str | None = None, project: str | None = None
    ) -> None:
        params = {"scope": scope} | scope_fields(workspace=workspace, project=project)
        await self.call("DELETE", "/v1/governance", params=params)

    # ---- jobs and state --------------------------------------------------------------------

    async def consolidate(self, now: str | None = None, timeout_s: float | None = None) -> Any:
        """Run the consolidation job now: `{job, changed}`."""
        return await self.call(
            "POST", "/v1/jobs/consolidation", json={"now": now} if now else {}, timeout_s=timeout_s
        )

    async def pipeline(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("GET", "/v1/pipeline")
        return result

    async def health(self) -> dict[str, Any]:
        """`/readyz`; a 503 (a dependency down) is returned as `{ready: false, detail}`."""
        try:
            result: dict[str, Any] = await self.call("GET", "/readyz")
            return result
        except PcmError as exc:
            if exc.status is None:
                raise
            return {"ready": False, "detail": str(exc)}

    async def stats(self) -> dict[str, Any]:
        """Exact counts (`GET /v1/stats`: memories by state, pinned, episode records) and
        the pipeline backlog."""
        counts: dict[str, Any] = await self.call("GET", "/v1/stats")
        pipeline = await self.pipeline()
        return counts | {"pending": pipeline["pending"]}
