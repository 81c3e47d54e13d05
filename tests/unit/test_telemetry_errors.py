"""`describe_error`: a driver's error says its code and message in a log line."""

from __future__ import annotations

from neo4j.exceptions import ClientError

from pcm_common.runtime.telemetry import describe_error


def test_a_driver_error_logs_its_code_and_message() -> None:
    exc = ClientError._hydrate_neo4j(
        code="Neo.ClientError.Database.DatabaseNotFound", message="no database pcm"
    )
    text = describe_error(exc)
    assert "Neo.ClientError.Database.DatabaseNotFound" in text and "no database pcm" in text


def test_a_plain_error_is_its_repr_cut_to_the_limit() -> None:
    assert describe_error(ValueError("x" * 500), limit=40) == repr(ValueError("x" * 500))[:40]
