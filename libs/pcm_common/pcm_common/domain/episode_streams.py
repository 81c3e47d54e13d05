"""The Redis key of an owner's current auto-episode (`pcm_ingest.episodes`): one per
tenant, scope, workspace, project and user, hashed so that no name needs escaping. Here so
that erasure (`pcm_common.erasure`) finds the keys of the owners it erases."""

from __future__ import annotations

import hashlib


def episode_stream_key(
    tenant: str, scope: str, workspace: str | None, project: str | None, user_id: str | None
) -> str:
    parts = "\x1f".join([scope, workspace or "", project or "", user_id or ""])
    digest = hashlib.sha256(parts.encode()).hexdigest()[:24]
    return f"pcm:episode:{tenant}:{digest}"
