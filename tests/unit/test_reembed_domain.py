"""Pure parts of re-embedding: what the job's record says to a client, when two payloads
are the same for the agreement check, and which models a store may move to."""

from __future__ import annotations

import pytest

from pcm_common.data.reembed import UnknownModel, check_model
from pcm_common.domain.reembed import Progress, same_payload


def test_same_payload_reads_a_last_place_float_change_as_the_same() -> None:
    a = {"text": "x", "strength": {"s_ref": 0.1 + 0.2, "n": 3}, "tags": [1.0, "a"]}
    b = {"text": "x", "strength": {"s_ref": 0.3, "n": 3.0}, "tags": [1, "a"]}
    assert same_payload(a, b)
    assert not same_payload(a, {**b, "strength": {"s_ref": 0.31, "n": 3}})
    assert not same_payload(a, {**b, "pinned": True})  # a key more
    assert not same_payload({"pinned": True}, {"pinned": 1})  # a bool is not a number
    assert not same_payload({"tags": [1, 2]}, {"tags": [1]})
    assert same_payload({"v": None}, {"v": None}) and not same_payload({"v": None}, {"v": 0})


def test_progress_of_a_record() -> None:
    none = Progress.of({}, store_model="pcm-local/minilm").public()
    assert none["status"] == "none" and none["fraction"] == 0.0 and none["job_id"] is None
    running = Progress.of(
        {"id": "j", "status": "running", "model": "m2", "done": "30", "total": "120"},
        store_model="m1",
    )
    assert running.fraction == 0.25 and running.public()["store_model"] == "m1"
    # Writes during the job take `done` past the total counted at its start.
    assert (
        Progress.of({"status": "running", "done": "130", "total": "120"}, store_model="m").fraction
        == 1.0
    )
    assert (
        Progress.of({"status": "done", "done": "0", "total": "0"}, store_model="m2").fraction == 1.0
    )
    assert Progress.of({"status": "running", "done": "x"}, store_model="m").done == 0


def test_the_models_a_store_may_move_to() -> None:
    check_model("pcm-local/minilm-q8t", "pcm-local/minilm")
    check_model("openai/text-embedding-3-small", "pcm-local/minilm-q8s")  # dimension known
    with pytest.raises(UnknownModel, match="unknown embedding model"):
        check_model("pcm-local/nope", "pcm-local/minilm")
    with pytest.raises(UnknownModel, match="unknown embedding model"):
        check_model("someone/mystery-model", "pcm-local/minilm")
    with pytest.raises(UnknownModel, match="already"):
        check_model("pcm-local/minilm", "pcm-local/minilm")
    with pytest.raises(UnknownModel, match="already"):  # searched alike: nothing to move
        check_model("pcm-local/minilm", "pcm-local/minilm-q8s")
