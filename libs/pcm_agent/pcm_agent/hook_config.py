"""The hooks' settings, from the environment Claude Code gives its hook commands
(docs/agents.md, "Hook settings")."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from pcm_client.models import Precision

DEFAULT_STATE_DIR = Path.home() / ".cache" / "pcm" / "hooks"


def _float_env(
    env: Mapping[str, str], name: str, default: float, *, zero_ok: bool = False
) -> float:
    """A positive number from `env` (or 0 too, with `zero_ok`); anything else: `default`."""
    try:
        value = float(env.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 or (zero_ok and value == 0) else default


def os_user() -> str | None:
    """The login name of whoever runs the hook, or None when the system cannot say."""
    try:
        return getpass.getuser() or None
    except (OSError, KeyError, ImportError):  # no passwd entry, no login variables
        return None


_PRECISIONS: tuple[Precision, ...] = get_args(Precision)


def _precision(env: Mapping[str, str]) -> Precision:
    """PCM_HOOK_PRECISION: "precise" (the default: an agent's context gets what clearly
    answers, or nothing) or "standard"; anything else reads as the default."""
    value = env.get("PCM_HOOK_PRECISION", "").strip().lower()
    return value if value in _PRECISIONS else "precise"


@dataclass(frozen=True)
class HookConfig:
    recall_timeout_s: float = 5.0
    store_timeout_s: float = 2.0
    job_timeout_s: float = 3.0
    max_context_chars: int = 10_000
    # Stop runs consolidation at most this often (PreCompact always does); 0: every Stop.
    consolidate_every_s: float = 900.0
    state_dir: Path = DEFAULT_STATE_DIR
    project: str | None = None  # PCM_PROJECT, fixed for every cwd
    workspace: str | None = None
    # PCM_USER_ID, else the OS user: captures are the user's own, and a recall sees that
    # user's memories and those stored for everyone, never another user's.
    user_id: str | None = None
    precision: Precision = "precise"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HookConfig:
        env = os.environ if env is None else env
        return cls(
            recall_timeout_s=_float_env(env, "PCM_HOOK_RECALL_TIMEOUT_S", 5.0),
            store_timeout_s=_float_env(env, "PCM_HOOK_STORE_TIMEOUT_S", 2.0),
            job_timeout_s=_float_env(env, "PCM_HOOK_JOB_TIMEOUT_S", 3.0),
            max_context_chars=int(_float_env(env, "PCM_HOOK_MAX_CONTEXT_CHARS", 10_000)),
            consolidate_every_s=_float_env(
                env, "PCM_HOOK_CONSOLIDATE_EVERY_S", 900.0, zero_ok=True
            ),
            state_dir=Path(env["PCM_HOOK_STATE_DIR"])
            if env.get("PCM_HOOK_STATE_DIR")
            else DEFAULT_STATE_DIR,
            project=(env.get("PCM_PROJECT") or None),
            workspace=(env.get("PCM_WORKSPACE") or None),
            user_id=(env.get("PCM_USER_ID") or os_user()),
            precision=_precision(env),
        )

    def budget_for(self, event: str) -> float:
        """The most this event's hook may take: the calls it makes, plus slack; inside
        Claude Code's own limit for the event (`hooks_install.SETTINGS_TIMEOUT_S`)."""
        calls = {
            "SessionStart": self.recall_timeout_s,
            "UserPromptSubmit": self.recall_timeout_s + self.store_timeout_s,
            "PostToolUse": self.store_timeout_s,
            "PostToolUseFailure": self.store_timeout_s,
        }.get(event, self.job_timeout_s)
        return calls + 1.0
