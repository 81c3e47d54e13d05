"""Schemathesis against the live OpenAPI schema (issue 33): every operation, with valid and
invalid generated requests, answers no 5xx, and every answer (its status code, content type
and body) is one /openapi.json declares, the error bodies included.

The requests go to the shared session server over real HTTP, as a tenant of their own (an
admin key stored for it in Redis), so that what the fuzzer writes, the governance it sets,
the keys it makes and the jobs it runs touch no other test's tenant. Bounded for CI on two
cores: a few examples per operation and mode, no shrinking, no example database."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import Callable

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from redis.asyncio import Redis
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from pcm_common.access.apikeys import KeyStore
from tests.conftest import RUN, TEST_REDIS_URL

EXAMPLES = int(os.environ.get("PCM_SCHEMATHESIS_EXAMPLES", "40"))  # per operation and mode
STATUSES: dict[str, Counter[int]] = {}  # what each operation answered, for the log
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


# `POST /v1/import` takes JSON Lines (an export's): bodies of lines that are memories of the
# format, or JSON of another shape, or any bytes.
_LINE = st.fixed_dictionaries(
    {
        "kind": st.just("memory"),
        "memory": st.fixed_dictionaries(
            {
                "id": st.uuids().map(str),
                "text": st.text(min_size=1, max_size=80),
                "text_hash": st.just("-"),
                "created_at": st.just("2026-01-01T00:00:00Z"),
                "ingested_at": st.just("2026-01-01T00:00:00Z"),
                "strength": st.just({"s_ref": 0.6, "t_ref": "2026-01-01T00:00:00Z"}),
            }
        ),
    }
).map(json.dumps)
schemathesis.openapi.media_type(
    "application/x-ndjson",
    st.one_of(
        st.lists(st.one_of(_LINE, st.text(max_size=40)), max_size=4).map(
            lambda lines: "\n".join(lines).encode()
        ),
        st.binary(max_size=100),
    ),
)


async def _own_tenant_key() -> str:
    redis = Redis.from_url(TEST_REDIS_URL)
    try:
        new = await KeyStore(redis).create(f"tenant-schemathesis-{RUN}", "admin")
    finally:
        await redis.aclose()
    return new.key


def _fuzz(url: str, key: str) -> list[str]:
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    headers = {"Authorization": f"Bearer {key}"}
    failures: list[str] = []
    with requests.Session() as session:
        for result in schema.get_all_operations():
            op = result.ok()  # type: ignore[union-attr]
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                test = _operation_test(op.as_strategy(generation_mode=mode), url, session, headers)
                try:
                    test()
                except Unsatisfiable:
                    assert mode is GenerationMode.NEGATIVE  # nothing to make invalid
                except (Exception, BaseExceptionGroup) as exc:  # schemathesis' FailureGroup
                    failures.append(f"{op.label} [{mode.value}]: {str(exc)[:1500]}")
    return failures


def _operation_test(
    strategy: object, url: str, session: requests.Session, headers: dict[str, str]
) -> Callable[[], None]:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Case) -> None:
        response = case.call_and_validate(
            base_url=url, session=session, headers=headers, checks=CHECKS, timeout=60
        )
        STATUSES.setdefault(case.operation.label, Counter())[response.status_code] += 1

    return run


async def test_schemathesis_finds_nothing(pcm_url: str) -> None:
    key = await _own_tenant_key()
    # The server runs in this event loop; the blocking fuzzer runs beside it in a thread.
    failures = await asyncio.to_thread(_fuzz, pcm_url, key)
    for label, seen in STATUSES.items():
        print(label, dict(sorted(seen.items())))
    assert not failures, "\n\n".join(failures)
