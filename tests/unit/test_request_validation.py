"""Request bodies that would store something unreadable or widen a recall are refused by
the schemas (422 through the API): deep or non-finite metadata, invisible text, empty names."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from pcm_common.text.clean import is_blank
from pcm_ingest.schemas import MAX_METADATA_DEPTH, MemoryIn, MemoryPatch
from pcm_recall.schemas import RecallIn


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_blank_means_nothing_visible() -> None:
    for text in ("", "   ", "\u200b", " \u200b\u200d\ufeff\n", "\u2060"):
        assert is_blank(text), repr(text)
    for text in ("a", " x\u200b", "0", "日本"):
        assert not is_blank(text), repr(text)


def test_metadata_depth_is_capped() -> None:
    assert MemoryIn(text="ok", metadata=nested(MAX_METADATA_DEPTH)).metadata
    with pytest.raises(ValidationError, match="nested deeper"):
        MemoryIn(text="deep", metadata=nested(MAX_METADATA_DEPTH + 1))
    with pytest.raises(ValidationError, match="nested deeper"):
        MemoryPatch(metadata={"list": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_metadata_numbers_are_finite(bad: float) -> None:
    with pytest.raises(ValidationError, match="finite"):
        MemoryIn(text="nan", metadata={"a": {"b": [1.0, bad]}})
    assert MemoryIn(text="fine", metadata={"a": 1.5, "b": [0, -2]}).metadata["a"] == 1.5


def test_invisible_text_and_queries_are_empty() -> None:
    with pytest.raises(ValidationError, match="text is empty"):
        MemoryIn(text="\u200b \u200c")
    with pytest.raises(ValidationError, match="text is empty"):
        MemoryPatch(text="\ufeff")
    with pytest.raises(ValidationError, match="query is empty"):
        RecallIn(query="  \u200b ")


@pytest.mark.parametrize("field", ["user_id", "workspace", "project"])
def test_a_recall_with_an_empty_name_is_refused(field: str) -> None:
    """ "" would read as no user (or scope) at all and widen the recall."""
    with pytest.raises(ValidationError):
        RecallIn(query="editor mode", **{field: ""})
    assert getattr(RecallIn(query="editor mode", **{field: "x"}), field) == "x"
