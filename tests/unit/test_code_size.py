"""Size limits of the code in libs/ and services/ (issue 34): no Python file over 500 lines
and no function over 60 (from its `def` to its last line, as `ast` spans it). A file or
function that grows past them is split into parts that read as its steps."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ("libs", "services")
# Installed front-end packages and vendored assets are not PCM's code.
SKIPPED_DIRS = {"node_modules", "vendor", "static", ".venv", "__pycache__", "build", "dist"}
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60


def _python_files() -> Iterator[Path]:
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if SKIPPED_DIRS.isdisjoint(path.relative_to(ROOT).parts):
                yield path


def _long_functions(path: Path, source: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            span = (node.end_lineno or node.lineno) - node.lineno + 1
            if span > MAX_FUNCTION_LINES:
                where = path.relative_to(ROOT)
                yield f"{where}:{node.lineno} {node.name}: {span} lines"


def test_the_trees_hold_python_files() -> None:
    # A guard over nothing would pass forever: the walk must see the packages.
    assert sum(1 for _ in _python_files()) > 100


def test_no_file_over_the_limit() -> None:
    over = []
    for path in _python_files():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES:
            over.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not over, f"files over {MAX_FILE_LINES} lines:\n" + "\n".join(over)


def test_no_function_over_the_limit() -> None:
    over = [
        line
        for path in _python_files()
        for line in _long_functions(path, path.read_text(encoding="utf-8"))
    ]
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(over)


def test_a_long_function_is_named() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    source = f"def short():\n    pass\n\n\nasync def long():\n{body}\n"
    found = list(_long_functions(ROOT / "libs" / "example.py", source))
    assert found == ["libs/example.py:5 long: 61 lines"]
