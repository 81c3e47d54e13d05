"""Cue-dependent reactivation and the recall score (DESIGN §3) as properties, for the
design's cue (a probability or a cosine) and for cues calibrated to other relevance scales
(the recall service's fused rank score)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain import scoring

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
starts = st.floats(min_value=0.0, max_value=0.9, allow_nan=False)
spans = st.floats(min_value=0.01, max_value=0.5, allow_nan=False)
EPS = 1e-12


@given(unit, unit, starts, spans)
def test_reactivated_lies_between_strength_and_full(
    s: float, rel: float, start: float, span: float
) -> None:
    assert s - EPS <= scoring.reactivated(s, rel, start, span) <= 1.0 + EPS


@given(unit, unit, unit, starts, spans)
def test_reactivated_grows_with_cue_and_strength(
    s: float, a: float, b: float, start: float, span: float
) -> None:
    lo, hi = sorted((a, b))
    assert scoring.reactivated(s, lo, start, span) <= scoring.reactivated(s, hi, start, span) + EPS
    assert scoring.reactivated(lo, s, start, span) <= scoring.reactivated(hi, s, start, span) + EPS


@given(unit, unit, starts, spans)
def test_weak_cue_restores_nothing_strong_cue_everything(
    s: float, x: float, start: float, span: float
) -> None:
    assert scoring.reactivated(s, start * x, start, span) == s
    assert scoring.reactivated(s, start + span * (1.0 + x), start, span) == pytest.approx(1.0)


@given(unit, unit, unit, starts, spans)
def test_strong_cue_ranks_by_relevance_alone(
    x: float, y: float, s: float, start: float, span: float
) -> None:
    """From start+span on, the strength earlier recalls gave a memory no longer matters: an
    equally relevant memory that was never recalled is not outranked by it."""
    full = start + span + EPS  # clear of rounding at the edge
    a, b = full + x, full + y
    cue = {"cue_start": start, "cue_span": span}
    assert scoring.score(a, 0.0, **cue) == scoring.score(a, s, **cue)
    if a > b:
        assert scoring.score(a, 0.0, **cue) > scoring.score(b, 1.0, **cue)


@given(unit, unit, unit, starts, spans)
def test_score_grows_with_relevance_at_equal_strength(
    s: float, a: float, b: float, start: float, span: float
) -> None:
    lo, hi = sorted((a, b))
    cue = {"cue_start": start, "cue_span": span}
    assert scoring.score(lo, s, **cue) <= scoring.score(hi, s, **cue) + EPS


def test_design_cue_is_the_default() -> None:
    assert (scoring.CUE_START, scoring.CUE_SPAN) == (0.5, 0.3)
    assert scoring.reactivated(0.2, 0.65) == scoring.reactivated(0.2, 0.65, 0.5, 0.3)
    assert scoring.reactivated(0.2, 0.65) == pytest.approx(0.6)
    assert scoring.score(0.9, 0.1) == scoring.score(0.9, 1.0) == 0.9
