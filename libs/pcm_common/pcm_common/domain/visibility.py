"""Who sees what, and who may be grouped with whom (README "Who sees what"), defined once.

Two relations over memories of one tenant (tenants are apart in every store call):

- `audience`: what an asker (a recall, a recall's side effects) sees. A project sees itself,
  its workspace and global memories, never another project; a user sees their own memories
  and those stored for everyone (no user), never another user's; an asker without a user
  sees the whole tenant.
- `peers`: which memories may be compared or grouped with a memory: its family for
  surprisal, its routine, the usual pattern, supersession, duplicates and near-duplicates,
  episodes and their records, spreading activation's associates. Only memories of the same
  owner: the same user (memories stored without a user are their own group), the same
  scope and the same workspace / project where the scope has one. A user's routine must
  never be judged against another user's entries, nor a project's against another's.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from pcm_common.domain.filters import Filter

OWNER_FIELDS = ("user_id", "scope", "workspace", "project")
# The version of `peers` that stored verdicts were judged under: verdicts of an older one
# may hold another owner's memories in their family and usual text, and are judged again.
GROUPING = 1


def audience(
    user_id: str | None = None, workspace: str | None = None, project: str | None = None
) -> Filter:
    """What an asker with these names sees (module docstring)."""
    should: list[dict[str, Any]] = [{"scope": "global"}]
    if workspace:
        should.append({"scope": "workspace", "workspace": workspace})
    if project:
        group: dict[str, Any] = {"scope": "project", "project": project}
        if workspace:
            group["workspace"] = workspace
        should.append(group)
    must: dict[str, Any] = {"user_id": [user_id, None]} if user_id else {}
    return Filter(must=must, should=should)


def owner(memory: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """The group a memory (a payload, or a write's fields) belongs to: (user, scope,
    workspace, project), with "" for what it has none of. A workspace or project name
    counts only where the scope has one: a global memory is global whatever it names."""
    raw = memory.get("scope") or "global"
    scope = str(raw.value if isinstance(raw, Enum) else raw)
    workspace = str(memory.get("workspace") or "") if scope in ("workspace", "project") else ""
    project = str(memory.get("project") or "") if scope == "project" else ""
    return (str(memory.get("user_id") or ""), scope, workspace, project)


def peers(memory: Mapping[str, Any]) -> dict[str, Any]:
    """`Filter.must` conditions selecting the memories of `memory`'s group (`owner`). A
    memory without a user selects memories without a user (None: "is empty")."""
    user, scope, workspace, project = owner(memory)
    must: dict[str, Any] = {"user_id": user or None, "scope": scope}
    if scope in ("workspace", "project"):
        must["workspace"] = workspace
    if scope == "project":
        must["project"] = project
    return must


def same_group(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two memories may be compared or grouped (`peers` evaluated in process)."""
    return owner(a) == owner(b)
