"""pcm_client's retries, timeouts and error classes over real HTTP, against a scripted
server (tests/scripted_http.py) for what PCM cannot be made to answer on demand: a 503
then a 201, a Retry-After, a connection dropped after the request arrived."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pydantic
import pytest

import pcm_client
from pcm_client import AsyncPcmClient, PcmClient, Retry
from pcm_client.errors import BY_CODE, retry_after_s
from pcm_client.retry import NO_RETRY
from tests.conftest import free_port
from tests.scripted_http import DROP, Reply, scripted

CREATED = Reply(201, {"id": "m-1", "status": "created"})
FAST = Retry(attempts=4, backoff_s=0.01, max_backoff_s=0.05)
RECALLED = {
    "anomaly_flags": [],
    "asker_context": [],
    "situational_context": [],
    "episode_context": [],
    "prompt": "No relevant memories found",
    "empty": True,
    "timings_ms": {},
}


def busy(status: int = 503, after: str | None = None) -> Reply:
    code = "rate_limited" if status == 429 else "unavailable"
    headers = {"Retry-After": after} if after else {}
    return Reply(status, {"error": code, "detail": "later"}, headers)


def test_a_503_is_retried_after_retry_after_with_the_same_idempotency_key() -> None:
    with scripted([busy(503, "1"), CREATED]) as server, PcmClient(server.url, "k1") as pcm:
        stored = pcm.store("Alice moved to Berlin.", project="p")
    assert stored.id == "m-1" and stored.status == "created"
    first, second = server.received
    key = first.headers["idempotency-key"]
    assert key and second.headers["idempotency-key"] == key  # one write, however many tries
    assert second.at - first.at >= 1.0  # not before the server said
    assert first.headers["authorization"] == "Bearer k1"
    assert first.body == second.body == {"text": "Alice moved to Berlin.", "project": "p"}


def test_a_given_idempotency_key_is_sent_as_it_is() -> None:
    with scripted([CREATED]) as server, PcmClient(server.url, "k") as pcm:
        pcm.store("x", idempotency_key="import-42")
        pcm.store("y")
        pcm.store("z")
    keys = [r.headers["idempotency-key"] for r in server.received]
    assert keys[0] == "import-42" and len(set(keys)) == 3  # a new key per write otherwise


def test_a_429_without_retry_after_backs_off_then_gives_up() -> None:
    with scripted([busy(429)]) as server, PcmClient(server.url, "k", retry=FAST) as pcm:
        with pytest.raises(pcm_client.RateLimited) as caught:
            pcm.recall("anything")
    assert len(server.received) == FAST.attempts
    assert caught.value.status == 429 and caught.value.code == "rate_limited"


def test_a_retry_after_longer_than_the_limit_is_raised_at_once() -> None:
    retry = Retry(max_retry_after_s=10)
    with scripted([busy(429, "120")]) as server, PcmClient(server.url, "k", retry=retry) as pcm:
        started = time.monotonic()
        with pytest.raises(pcm_client.RateLimited) as caught:
            pcm.stats()
    assert caught.value.retry_after == 120 and len(server.received) == 1
    assert time.monotonic() - started < 5


def test_other_errors_are_not_retried() -> None:
    secret = Reply(422, {"error": "secret_detected", "detail": [{"kind": "aws_key"}]})
    with scripted([secret]) as server, PcmClient(server.url, "k", retry=FAST) as pcm:
        with pytest.raises(pcm_client.SecretDetected) as caught:
            pcm.store("aws AKIA...")
    assert len(server.received) == 1
    assert str(caught.value) == '422 secret_detected: [{"kind": "aws_key"}]'
    assert isinstance(caught.value, pcm_client.ValidationError)


def test_a_dropped_connection_is_replayed_only_when_that_is_safe() -> None:
    with scripted([DROP, Reply(200, RECALLED)]) as server:
        with PcmClient(server.url, "k", retry=FAST) as pcm:
            assert pcm.recall("q").empty  # a read: sent again
        assert len(server.received) == 2
    with scripted([DROP, CREATED]) as server:
        with PcmClient(server.url, "k", retry=FAST) as pcm:
            assert pcm.store("x").id == "m-1"  # a keyed write: the server answers it once
        first, second = server.received
        assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    with scripted([DROP, Reply(204)]) as server:
        with PcmClient(server.url, "k", retry=FAST) as pcm:
            with pytest.raises(pcm_client.TransportError):
                pcm.delete("m-1")  # it may have been deleted: a second try would say 404
        assert len(server.received) == 1
    with scripted([DROP, Reply(200, {"job": "consolidation", "changed": 0})]) as server:
        with PcmClient(server.url, "k", retry=FAST) as pcm:
            with pytest.raises(pcm_client.TransportError):
                pcm.consolidate()  # a job run is not started twice
        assert len(server.received) == 1


def test_an_unreachable_server_is_retried_then_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    retry = Retry(attempts=3, backoff_s=0.2, max_backoff_s=0.2, rng=random.Random(7))
    waits = [retry.backoff(n) for n in (1, 2)]
    retry = Retry(attempts=3, backoff_s=0.2, max_backoff_s=0.2, rng=random.Random(7))
    with PcmClient(url, "k", retry=retry) as pcm:
        started = time.monotonic()
        with pytest.raises(pcm_client.TransportError) as caught:
            pcm.store("x")  # never sent: safe to try again even without a key
    assert time.monotonic() - started >= sum(waits) * 0.9
    assert f"cannot reach PCM at {url}" in str(caught.value)
    assert caught.value.status is None and caught.value.code is None


def test_a_silent_server_times_out() -> None:
    slow = Reply(200, RECALLED, delay_s=3)
    with scripted([slow]) as server:
        with PcmClient(server.url, "k", timeout=0.3, retry=NO_RETRY) as pcm:
            with pytest.raises(pcm_client.Timeout, match=r"did not answer within 0\.3 s"):
                pcm.stats()
            with pytest.raises(pcm_client.Timeout, match=r"within 0\.2 s"):
                pcm.recall("q", timeout_s=0.2)  # a call's own limit


def test_each_error_code_has_its_class_and_unknown_ones_fall_back_on_the_status() -> None:
    cases: list[tuple[Reply, type[pcm_client.ApiError]]] = [
        (Reply(401, {"error": "unknown_api_key", "detail": None}), pcm_client.Unauthorized),
        (Reply(403, {"error": "forbidden", "detail": "admin"}), pcm_client.Forbidden),
        (Reply(403, {"error": "capture_refused", "detail": []}), pcm_client.CaptureRefused),
        (Reply(404, {"error": "memory_not_found", "detail": "x"}), pcm_client.NotFound),
        (Reply(409, {"error": "job_running", "detail": "x"}), pcm_client.JobRunning),
        (Reply(409, {"error": "idempotency_key_in_progress"}), pcm_client.Conflict),
        (Reply(413, {"error": "text_too_large", "detail": "x"}), pcm_client.PayloadTooLarge),
        (Reply(422, {"error": "invalid_request", "detail": []}), pcm_client.ValidationError),
        (Reply(400, {"error": "malformed_json", "detail": []}), pcm_client.BadRequest),
        (Reply(422, {"error": "some_new_code", "detail": "x"}), pcm_client.ValidationError),
        (Reply(418, {"error": "teapot", "detail": "x"}), pcm_client.ApiError),
        (Reply(502, raw=b"<html>bad gateway</html>"), pcm_client.ServerError),
    ]
    with scripted([reply for reply, _ in cases]) as server:
        with PcmClient(server.url, "k", retry=NO_RETRY) as pcm:
            for reply, cls in cases:
                with pytest.raises(pcm_client.ApiError) as caught:
                    pcm.get("m-1")
                assert type(caught.value) is cls, (reply, caught.value)
                assert caught.value.status == reply.status
    assert str(caught.value) == "502: <html>bad gateway</html>"
    # Every code the table names maps to a class that says it is a PCM error.
    assert all(issubclass(c, pcm_client.PcmError) for c in BY_CODE.values())


def test_readyz_answers_503_as_not_ready_without_retrying() -> None:
    down = Reply(503, {"ready": False, "checks": {"redis": {"ok": False}}})
    with scripted([down]) as server, PcmClient(server.url, "k", retry=FAST) as pcm:
        assert pcm.ready().ready is False
    assert len(server.received) == 1


def test_an_unreadable_answer_is_a_pcm_error() -> None:
    with scripted([Reply(201, {"unexpected": True})]) as server:
        with PcmClient(server.url, "k") as pcm, pytest.raises(pcm_client.PcmError) as caught:
            pcm.store("x")
    assert "unexpected answer" in str(caught.value)


def test_retry_after_as_seconds_or_a_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_s(httpx.Response(503, headers={"Retry-After": "7"})) == 7
    assert retry_after_s(httpx.Response(503, headers={"Retry-After": later}), now) == 30
    assert retry_after_s(httpx.Response(503, headers={"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Response(503)) is None


def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    retry = Retry(backoff_s=0.5, max_backoff_s=4.0, rng=random.Random(3))
    for tried in range(1, 9):
        ceiling = min(4.0, 0.5 * 2 ** (tried - 1))
        waits = [retry.backoff(tried) for _ in range(200)]
        assert all(0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling * 0.8  # spread over the whole range, not one value
    with pytest.raises(ValueError):
        Retry(attempts=0)


def test_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCM_URL", "http://pcm.example:9000/")
    monkeypatch.setenv("PCM_API_KEY", "from-env")
    pcm = PcmClient()
    assert pcm.url == "http://pcm.example:9000" and pcm.api_key == "from-env"
    pcm.close()
    monkeypatch.delenv("PCM_URL")
    monkeypatch.delenv("PCM_API_KEY")
    local = PcmClient()
    assert (local.url, local.api_key) == (pcm_client.DEFAULT_URL, pcm_client.DEV_KEY)
    local.close()


def test_unknown_fields_are_refused_before_sending() -> None:
    with PcmClient("http://127.0.0.1:1", "k") as pcm, pytest.raises(pydantic.ValidationError):
        pcm.store("x", projcet="typo")  # type: ignore[call-arg]


async def test_the_async_client_retries_the_same_way() -> None:
    with scripted([busy(503, "0"), busy(429), CREATED]) as server:
        async with AsyncPcmClient(server.url, "k", retry=FAST) as pcm:
            stored = await pcm.store("x", user_id="u1")
        assert stored.id == "m-1"
        keys = {r.headers["idempotency-key"] for r in server.received}
        assert len(server.received) == 3 and len(keys) == 1
    with scripted([DROP, Reply(204)]) as server:
        async with AsyncPcmClient(server.url, "k", retry=FAST) as pcm:
            with pytest.raises(pcm_client.TransportError):
                await pcm.delete("m-1")
        assert len(server.received) == 1
