"""Each variant of deploy/k8s rendered once per session (tests/k8s/render.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.k8s.render import VARIANTS, Obj, copy_tree, render


@pytest.fixture(scope="session")
def k8s_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_tree(tmp_path_factory.mktemp("k8s"))


@pytest.fixture(scope="session")
def rendered(k8s_copy: Path) -> dict[str, list[Obj]]:
    return {variant: render(k8s_copy, variant) for variant in VARIANTS}
