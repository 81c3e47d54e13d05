"""A fresh virtual environment with one of the repository's packages installed from the
tree (not editable), as a user would install it: for the tests that check what a package
pulls in without the rest of the workspace."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Any of these in a client's environment means it pulled in the server.
SERVER_PACKAGES = frozenset(
    {
        "pcm-common",
        "pcm-cli",
        "pcm-ingest",
        "pcm-recall",
        "pcm-sweeper",
        "pcm-graph-extractor",
        "faststream",
        "redis",
        "qdrant-client",
        "qdrant-edge-py",
        "neo4j",
        "litellm",
        "spacy",
        "onnxruntime",
        "numpy",
    }
)


def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    local = Path.home() / ".local" / "bin" / "uv"
    if not found and local.exists():
        found = str(local)
    assert found, "uv is needed (make test installs it)"
    return found


def _run(argv: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300, env=env)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)


def fresh_venv(folder: Path, package: str) -> Path:
    """`folder` made a new virtual environment with `package` (a path under the repository
    root, e.g. "libs/pcm_client") installed; returns its python."""
    _run([uv(), "venv", "--python", sys.executable, str(folder)])
    python = folder / "bin" / "python"
    _run([uv(), "pip", "install", "--python", str(python), str(ROOT / package)])
    return python


def size_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_dir())


def installed(venv: Path) -> set[str]:
    """The distributions installed in `venv`, by normalised name."""
    names = set()
    for info in venv.glob("lib/python*/site-packages/*.dist-info"):
        name = re.sub(r"-[^-]+\.dist-info$", "", info.name)
        names.add(re.sub(r"[-_.]+", "-", name).lower())
    return names
