"""docs/api.md against the code: every error code the services raise is documented, and its
route table lists exactly the operations and statuses of the OpenAPI schema the all-in-one
app serves."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pcm_cli.app import dev_app
from pcm_common.runtime.http import _code

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "api.md").read_text()
_ROW = re.compile(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/\S*)` \| (.+) \|$", re.MULTILINE)
_STATUS = re.compile(r"\b([1-5]\d\d)\b")
# (status, code, ...): pcm_common.runtime.http, pcm_common.access.auth
_RAISERS = {"ApiError", "Refusal"}


def _raised_codes() -> dict[str, str]:
    """Each error code a source file of the services and libraries raises or answers with:
    `ApiError(status, "code", ...)`, `Refusal(status, "code", ...)` and `{"error": "code"}`
    bodies, by the place it is first seen."""
    found: dict[str, str] = {}
    for path in sorted([*ROOT.glob("services/*/*/**/*.py"), *ROOT.glob("libs/*/*/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            codes: list[ast.expr] = []
            if isinstance(node, ast.Call) and len(node.args) >= 2:
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name in _RAISERS:
                    codes.append(node.args[1])
            elif isinstance(node, ast.Dict):
                codes += [v for k, v in zip(node.keys, node.values, strict=True) if _is(k, "error")]
            for code in codes:
                if isinstance(code, ast.Constant) and isinstance(code.value, str):
                    found.setdefault(code.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _is(node: ast.expr | None, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def test_the_scan_finds_the_codes_it_is_meant_to() -> None:
    """(A scan that found nothing would pass the next test for nothing.)"""
    assert {"secret_detected", "rate_limited", "unavailable", "firewall_busy"} <= set(
        _raised_codes()
    )


def test_every_error_code_raised_is_documented() -> None:
    generic = {_code(status) for status in (400, 401, 403, 404, 405, 413, 418)}
    missing = {
        code: where
        for code, where in {**_raised_codes(), **{c: "http._code" for c in generic}}.items()
        if f"`{code}`" not in DOC
    }
    assert not missing, missing


@pytest.fixture(scope="module")
def schema_statuses() -> dict[str, set[str]]:
    """`METHOD path` -> the statuses the served schema declares for it."""
    paths = dev_app().openapi()["paths"]
    return {
        f"{method.upper()} {path}": set(op["responses"])
        for path, ops in paths.items()
        for method, op in ops.items()
    }


def test_the_route_table_is_the_served_schema(schema_statuses: dict[str, set[str]]) -> None:
    rows = {f"{m} {p}": set(_STATUS.findall(statuses)) for m, p, statuses in _ROW.findall(DOC)}
    assert rows.keys() == schema_statuses.keys(), (
        rows.keys() - schema_statuses.keys(),
        schema_statuses.keys() - rows.keys(),
    )
    wrong = {op: (rows[op], want) for op, want in schema_statuses.items() if rows[op] != want}
    assert not wrong, wrong
