"""pcm_client's models against the OpenAPI schema the services publish (`app.openapi()` of
the ingest, recall and sweeper apps): the same fields, the same types and enum values,
and for every call the client makes an operation the server serves. A field added,
renamed, retyped or dropped on either side fails here."""

from __future__ import annotations

import os
import re
import typing
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pytest
from pydantic import BaseModel

from pcm_client import calls, models
from pcm_client.models import SCHEMA_MODELS

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REQUESTS = {"MemoryIn", "BatchIn", "MemoryPatch", "RecallIn", "PolicyIn", "JobIn", "KeyIn"}
REQUESTS |= {"RotateIn", "RecallFeedbackIn", "MemoryFeedbackIn"}
Schema = dict[str, Any]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Schema]:
    """The OpenAPI documents of each service's own app, by service."""
    from pcm_cli.app import build_app
    from pcm_common.runtime.config import PcmSettings

    settings = PcmSettings(qdrant_path=tmp_path_factory.mktemp("q"))
    return {n: build_app([n], settings).openapi() for n in ("ingest", "recall", "sweeper")}


def _components(served: Mapping[str, Schema]) -> dict[str, Schema]:
    merged: dict[str, Schema] = {}
    for doc in served.values():
        merged |= doc["components"]["schemas"]
    return merged


def _resolve(node: Schema, defs: Mapping[str, Schema]) -> Schema:
    ref = node.get("$ref")
    return defs[ref.rsplit("/", 1)[1]] if ref else node


def _kinds(node: Schema, defs: Mapping[str, Schema]) -> frozenset[Any]:
    """What a property's schema admits, as comparable parts: enum value sets, model names,
    primitive types (date-time apart), arrays and maps of those; constraints left out."""
    if "anyOf" in node:
        return frozenset().union(*(_kinds(n, defs) for n in node["anyOf"]))
    ref = node.get("$ref")
    node = _resolve(node, defs)
    if "enum" in node:
        return frozenset({("enum", frozenset(node["enum"]))})
    if "const" in node:
        return frozenset({("enum", frozenset({node["const"]}))})
    kind = node.get("type")
    if kind == "object" and "properties" in node:
        return frozenset({("model", ref.rsplit("/", 1)[1] if ref else node.get("title"))})
    if kind == "object":
        extra = node.get("additionalProperties", True)
        inner = _kinds(extra, defs) if isinstance(extra, dict) and extra else "any"
        return frozenset({("map", inner)})
    if kind == "array":
        return frozenset({("array", _kinds(node.get("items", {}), defs))})
    if kind == "string" and node.get("format") == "date-time":
        return frozenset({"datetime"})
    return frozenset({kind or "any"})


def _fields(schema: Schema, defs: Mapping[str, Schema]) -> dict[str, frozenset[Any]]:
    return {name: _kinds(p, defs) for name, p in schema.get("properties", {}).items()}


def _client_schema(model: type[BaseModel]) -> tuple[Schema, dict[str, Schema]]:
    schema = model.model_json_schema(ref_template="#/$defs/{model}")
    return schema, schema.get("$defs", {})


def test_every_client_model_matches_the_served_schema(served: dict[str, Schema]) -> None:
    components = _components(served)
    problems: list[str] = []
    for name, model in SCHEMA_MODELS.items():
        theirs = components.get(name)
        if theirs is None:
            problems.append(f"{name}: the server publishes no such schema")
            continue
        ours, defs = _client_schema(model)
        mine, served_fields = _fields(ours, defs), _fields(theirs, components)
        if set(mine) != set(served_fields):
            problems.append(
                f"{name}: fields only in the client {sorted(set(mine) - set(served_fields))}, "
                f"only on the server {sorted(set(served_fields) - set(mine))}"
            )
            continue
        required, served_required = set(ours.get("required", [])), set(theirs.get("required", []))
        for field, kinds in served_fields.items():
            # None means "not sent" in a request and "absent" in an answer: compared apart.
            if mine[field] - {"null"} != kinds - {"null"}:
                problems.append(f"{name}.{field}: client {mine[field]} != served {kinds}")
            if name not in REQUESTS and "null" in kinds and "null" not in mine[field]:
                problems.append(f"{name}.{field}: the server may answer null")
        if name in REQUESTS and required != served_required:
            problems.append(f"{name}: required {required} != served {served_required}")
        if name not in REQUESTS and not required <= served_required:
            problems.append(f"{name}: requires {required - served_required}, not always sent")
    assert not problems, "\n".join(problems)


def test_the_keyword_arguments_are_the_request_fields() -> None:
    """The methods' keyword arguments (TypedDicts) name each request model's fields."""
    pairs = [
        (calls.MemoryFields, models.MemoryIn, {"text"}),
        (calls.RecallFields, models.RecallIn, {"query"}),
        (calls.PatchFields, models.MemoryPatch, set()),
        (calls.PolicyFields, models.PolicyIn, {"scope"}),
    ]
    for fields, model, positional in pairs:
        assert set(typing.get_type_hints(fields)) == set(model.model_fields) - positional


def _sample_calls() -> list[calls.Call[Any]]:
    at = datetime(2026, 1, 1)
    return [
        calls.store(models.MemoryIn(text="x"), None),
        calls.store_batch([{"text": "x"}], None),
        calls.recall(models.RecallIn(query="q")),
        calls.recall_feedback("r", models.RecallFeedbackIn(helpful=["m"])),
        calls.memory_feedback("m", models.MemoryFeedbackIn(signal="wrong")),
        calls.get("m"),
        calls.history("m"),
        calls.update("m", models.MemoryPatch(pinned=True)),
        calls.delete("m"),
        calls.list_memories({}, 10, None),
        calls.stats({}),
        calls.policies(None, None, None),
        calls.set_policy(models.PolicyIn()),
        calls.clear_policy("global", None, None),
        calls.jobs(),
        calls.run_job("consolidation", models.JobIn(now=at)),
        calls.job_runs("consolidation", 1),
        calls.pipeline(),
        calls.ready(),
        calls.list_keys(),
        calls.create_key("data", None),
        calls.rotate_key("k_1", None, None),
        calls.revoke_key("k_1"),
        calls.import_part(b"{}"),
        calls.erase("u", None, None),
    ]


def test_every_call_the_client_makes_is_served(served: dict[str, Schema]) -> None:
    operations = {
        (method.upper(), path)
        for doc in served.values()
        for path, ops in doc["paths"].items()
        for method in ops
    }
    templates = [
        (method, re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"))
        for method, path in operations
    ]
    missing = [
        f"{c.method} {c.path}"
        for c in _sample_calls()
        if not any(m == c.method and t.match(c.path) for m, t in templates)
    ]
    assert not missing, missing
    assert ("GET", "/v1/export") in operations  # (streamed by the clients, not a `Call`)
    # The models the answers are read with are the ones those operations declare.
    ingest = served["ingest"]["paths"]
    created = ingest["/v1/memories"]["post"]["responses"]["201"]["content"]["application/json"]
    assert created["schema"]["$ref"].endswith("/StoreResult")
    recall = served["recall"]["paths"]["/v1/recall"]["post"]
    body = recall["requestBody"]["content"]["application/json"]["schema"]
    assert body["$ref"].endswith("/RecallIn")
    assert recall["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/RecallOut"
    )


def test_recall_mode_and_associations_are_in_the_schema(served: dict[str, Schema]) -> None:
    """Associative recall's contract (docs/api.md, "Associative recall"): the request's
    `mode` enum, the answer's `associations` and `query_charge`."""
    defs = _components(served)
    mode = _resolve(defs["RecallIn"]["properties"]["mode"], defs)
    assert set(mode["enum"]) == {"focused", "associative"}
    assert defs["RecallIn"]["properties"]["mode"].get("default") == "focused"
    out = defs["RecallOut"]["properties"]
    assert _kinds(out["associations"], defs) == {("array", frozenset({("model", "Association")}))}
    assert {"memory_id", "text", "energy", "via", "hops"} <= set(defs["Association"]["required"])
    assert "query_charge" in out
