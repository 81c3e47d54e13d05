"""Worker processes run at a lower CPU priority than the service (`runtime.priority`)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from pcm_common.runtime.priority import lower_worker_priority, worker_nice


def _niceness() -> int:
    return os.nice(0)


def test_a_worker_runs_lower_than_its_parent() -> None:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context, initializer=lower_worker_priority) as pool:
        child = pool.submit(_niceness).result()
    assert child == min(19, os.nice(0) + worker_nice())


@pytest.mark.parametrize(("raw", "steps"), [("", 10), ("0", 0), ("5", 5), ("99", 19), ("x", 10)])
def test_the_setting(monkeypatch: pytest.MonkeyPatch, raw: str, steps: int) -> None:
    monkeypatch.setenv("PCM_WORKER_NICE", raw)
    assert worker_nice() == steps
