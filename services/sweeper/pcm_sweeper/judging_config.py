"""What the judging reads of the sweeper's settings (`JudgingConfig`), with defaults for a
caller that passes none (the benchmarks, tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pcm_common.domain import surprisal as sp


@dataclass(frozen=True)
class JudgingConfig:
    """Read from the sweeper settings when they define these fields, else these defaults."""

    family_min_cos: float = sp.FAMILY_MIN_COS
    family_max: int = sp.FAMILY_MAX
    family_min: int = sp.FAMILY_MIN
    kin: bool = True  # the routine index widens and cleans families (`pcm_sweeper.kin`)
    judge: str = "local"  # local | llm
    judge_model: str = "ollama/qwen2.5:3b-instruct"
    judge_api_base: str = ""
    judge_timeout_s: float = 30.0
    # The sweep leaves memories this young to the event consumer (wall clock).
    sweep_grace_s: float = 30.0
    sweep_batch: int = 256
    concurrency: int = 4  # verdicts asked of a model judge at once
    supersession: bool = True  # a memory that updates a family member supersedes it

    @classmethod
    def from_settings(cls, settings: Any) -> JudgingConfig:
        names = {
            "family_min_cos": "surprisal_family_min_cos",
            "family_max": "surprisal_family_max",
            "family_min": "surprisal_family_min",
            "kin": "surprisal_kin",
            "judge": "surprisal_judge",
            "judge_model": "surprisal_judge_model",
            "judge_api_base": "surprisal_judge_api_base",
            "judge_timeout_s": "surprisal_judge_timeout_s",
            "sweep_grace_s": "surprisal_sweep_grace_s",
            "sweep_batch": "surprisal_sweep_batch",
            "concurrency": "surprisal_concurrency",
            "supersession": "supersession",
        }
        values = {k: getattr(settings, v) for k, v in names.items() if hasattr(settings, v)}
        return cls(**values)
