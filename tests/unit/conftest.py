"""Unit tests run in this process alone: no server, and no spaCy parse process (each
start costs a process spawn and a pipeline load, ~2-3 s; the child itself is tested in
tests/integration/test_parse_process.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _parse_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCM_PARSE_PROCESS", "false")
