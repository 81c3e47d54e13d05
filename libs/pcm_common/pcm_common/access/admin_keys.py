"""/v1/admin/keys: a tenant's admin key creates, lists, rotates and revokes that tenant's
stored keys (never another tenant's: those answer 404 as if they did not exist). The
admin role itself is checked with every other route's in `pcm_common.access.auth`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from pcm_common.access.apikeys import KeyStore, NewKey, Role
from pcm_common.runtime.http import JSON_BODY, KEYED, ApiError, Res, Tenant, error_responses

DAY_S = 86_400
# The longest span a key's expiry or a rotation's overlap takes: beyond the calendar's end
# (year 9999) the date arithmetic overflowed, a 500 (found by schemathesis).
MAX_SPAN_S = 100 * 365 * DAY_S


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Role = "data"
    expires_in_s: int | None = Field(None, gt=0, le=MAX_SPAN_S)


class RotateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    overlap_s: int = Field(DAY_S, ge=0, le=MAX_SPAN_S)  # how long the old key keeps working
    expires_in_s: int | None = Field(None, gt=0, le=MAX_SPAN_S)


def _created(new: NewKey) -> dict[str, Any]:
    return {"key": new.key, **new.record.public()}


def _span(seconds: int | None) -> timedelta | None:
    return timedelta(seconds=seconds) if seconds is not None else None


def admin_router() -> APIRouter:
    router = APIRouter(
        prefix="/v1/admin", tags=["admin"], responses={**KEYED, **error_responses(403)}
    )

    @router.post("/keys", status_code=201, responses=JSON_BODY)
    async def create_key(body: KeyIn, tenant: Tenant, res: Res) -> dict[str, Any]:
        new = await KeyStore(res.redis).create(tenant, body.role, _span(body.expires_in_s))
        return _created(new)

    @router.get("/keys")
    async def list_keys(tenant: Tenant, res: Res) -> dict[str, Any]:
        return {"keys": [r.public() for r in await KeyStore(res.redis).list(tenant)]}

    @router.post(
        "/keys/{key_id}:rotate",
        status_code=201,
        responses={**JSON_BODY, **error_responses(404, 409)},
    )
    async def rotate_key(
        key_id: str, tenant: Tenant, res: Res, body: RotateIn | None = None
    ) -> dict[str, Any]:
        body = body or RotateIn()
        try:
            out = await KeyStore(res.redis).rotate(
                key_id, timedelta(seconds=body.overlap_s), tenant, _span(body.expires_in_s)
            )
        except ValueError as exc:
            raise ApiError(409, "key_not_active", str(exc)) from None
        if out is None:
            raise ApiError(404, "not_found", f"no key {key_id}")
        new, old = out
        return {**_created(new), "previous": old.public()}

    @router.delete("/keys/{key_id}", status_code=204, responses=error_responses(404))
    async def revoke_key(key_id: str, tenant: Tenant, res: Res) -> Response:
        if await KeyStore(res.redis).revoke(key_id, tenant) is None:
            raise ApiError(404, "not_found", f"no key {key_id}")
        return Response(status_code=204)

    return router
