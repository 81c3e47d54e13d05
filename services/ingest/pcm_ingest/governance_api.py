"""Scope governance routes (DESIGN §6): read, set and clear a scope's policy
(`pcm_common.domain.governance`). Ingest serves them because it enforces the capture mode;
the sweeper's `governance` job applies retention and caps."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import ValidationError

from pcm_common.domain.governance import Effective, Policy, ScopeRef, effective
from pcm_common.domain.memory import Scope
from pcm_common.runtime.http import JSON_BODY, KEYED, ApiError, Tenant, error_responses
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.governance import GovernanceStore
from pcm_common.text.clean import NulFree

router = APIRouter(prefix="/v1", tags=["governance"], responses=KEYED)
log = get_logger("ingest.governance")


def store_of(request: Request) -> GovernanceStore:
    store: GovernanceStore = request.app.state.ingest.governance
    return store


Store = Annotated[GovernanceStore, Depends(store_of)]


class PolicyIn(ScopeRef, Policy, NulFree):
    """A scope and what it sets: `{scope, workspace?, project?, capture_mode?,
    retention_days?, max_memories?}`; fields left out inherit from the wider scope."""


def _view(ref: ScopeRef, policy: Policy) -> dict[str, Any]:
    return ref.model_dump(mode="json") | policy.model_dump(mode="json")


def _effective_view(e: Effective) -> dict[str, Any]:
    return {
        "capture_mode": e.capture_mode.value,
        "retention_days": e.retention_days,
        "max_memories": e.max_memories,
    }


def _ref(scope: Scope, workspace: str | None, project: str | None) -> ScopeRef:
    try:
        return ScopeRef(scope=scope, workspace=workspace or "", project=project or "")
    except ValidationError as exc:
        raise ApiError(422, "invalid_scope", exc.errors()[0]["msg"]) from None


@router.get("/governance")
async def list_policies(
    tenant: Tenant,
    store: Store,
    scope: Scope | None = None,
    workspace: Annotated[str | None, Query(max_length=200)] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """Every policy the tenant set; with `scope` (and its names) also the policy in force
    for memories of that scope, inherited fields resolved. A project's workspace may be
    given to resolve through it, as a project memory stored with one does."""
    policies = await store.all(tenant)
    out: dict[str, Any] = {
        "policies": [_view(ScopeRef.from_key(k), p) for k, p in sorted(policies.items())]
    }
    if scope is not None:
        if scope is Scope.PROJECT and not project:
            raise ApiError(422, "invalid_scope", "scope 'project' needs a project")
        if scope is Scope.WORKSPACE and not workspace:
            raise ApiError(422, "invalid_scope", "scope 'workspace' needs a workspace")
        out["effective"] = _effective_view(
            effective(policies, scope.value, workspace or "", project or "")
        )
    return out


@router.put("/governance", responses=JSON_BODY)
async def set_policy(body: PolicyIn, tenant: Tenant, store: Store) -> dict[str, Any]:
    """Replace the policy of one scope (a policy that sets nothing clears it)."""
    ref = ScopeRef(scope=body.scope, workspace=body.workspace, project=body.project)
    policy = Policy(
        capture_mode=body.capture_mode,
        retention_days=body.retention_days,
        max_memories=body.max_memories,
    )
    await store.put(tenant, ref, policy)
    log.info("policy_set", tenant=tenant, scope=ref.key, **policy.model_dump(mode="json"))
    return _view(ref, policy)


@router.delete("/governance", status_code=204, responses=error_responses(404))
async def clear_policy(
    tenant: Tenant,
    store: Store,
    scope: Scope,
    workspace: Annotated[str | None, Query(max_length=200)] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    ref = _ref(scope, workspace, project)
    if not await store.delete(tenant, ref):
        raise ApiError(404, "policy_not_found", ref.key)
    log.info("policy_cleared", tenant=tenant, scope=ref.key)
    return Response(status_code=204)
