"""The load benchmark's figures from raw records (`bench.load_stats`), its mix option, and
its chart (`bench.svg_chart`)."""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET

import pytest

from bench.load import parse_mix
from bench.load_stats import (
    OpRecord,
    Sample,
    cpu_per_request_ms,
    cpu_split,
    group_drain,
    rss_growth,
    summarise,
    windows,
)
from bench.svg_chart import Panel, Series, render


def _records() -> list[OpRecord]:
    out = [OpRecord("recall", i * 0.1, float(10 + i), "ok") for i in range(100)]
    out += [OpRecord("write", 1.0, 200.0, "ok"), OpRecord("write", 2.0, 30.0, "503")]
    out.append(OpRecord("write", 12.0, 60_000.0, "timeout"))
    return out


def test_summary_per_operation() -> None:
    s = summarise(_records(), seconds=20.0)
    assert s["recall"]["count"] == 100 and s["recall"]["per_s"] == 5.0
    assert s["recall"]["p50_ms"] == 59.5 and s["recall"]["max_ms"] == 109.0
    assert s["recall"]["errors"] == {}
    assert s["write"]["errors"] == {"503": 1, "timeout": 1}
    assert s["all"]["count"] == 103 and s["all"]["errors"] == {"503": 1, "timeout": 1}


def test_windows_split_by_start() -> None:
    w = windows(_records(), width_s=5.0, seconds=12.5)
    assert [x["t_s"] for x in w] == [0.0, 5.0, 10.0]
    # 50 recalls and 2 writes start in the first 5 s, the other 50 recalls in the next;
    # the last window is 2.5 s long and holds the timed-out write.
    assert w[0]["per_s"] == 10.4 and w[0]["errors"] == 1
    assert w[1]["per_s"] == 10.0 and w[2]["per_s"] == 0.4 and w[2]["errors"] == 1


def test_rss_growth_compares_medians_of_the_edges() -> None:
    samples = [Sample(float(t), 100.0, 100.0 + t, t * 0.5, 0) for t in range(-5, 101)]
    g = rss_growth(samples, seconds=100.0, edge_s=10.0)
    assert g["first_mb"] == 105.0 and g["last_mb"] == 195.0 and g["peak_mb"] == 200.0
    assert g["growth_pct"] == pytest.approx(85.7)
    assert cpu_per_request_ms(samples, 100.0, requests=1000) == 50.0


def test_mix_is_normalised_and_checked() -> None:
    assert parse_mix("write=1,recall=3") == {"write": 0.25, "recall": 0.75}
    assert parse_mix("write=1,batch=0,recall=1") == {"write": 0.5, "recall": 0.5}
    for bad in ("write=x", "delete=1", "write=0", "write=-1,recall=2"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_mix(bad)


def test_chart_is_svg_with_a_line_per_series() -> None:
    svg = render(
        [
            Panel("RSS", "MB", [Series("a", [(0, 1.0), (5, 3.0)]), Series("b", [(0, 2.0)])]),
            Panel("Backlog", "", [Series("backlog", [(0, 0), (5, 40)])], [(4.0, "stop")]),
        ],
        "seconds",
    )
    root = ET.fromstring(svg)
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == 3
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "RSS" in texts and "stop" in texts and "50 " in texts  # the backlog axis top


def test_group_drain_names_the_stage_that_clears_last() -> None:
    groups = [
        {"t_s": 9.0, "judge": 50, "graph": 10},
        {"t_s": 10.5, "judge": 40, "graph": 5},
        {"t_s": 11.5, "judge": 20, "graph": 0},
        {"t_s": 12.5, "judge": 0, "graph": 3},  # a late entry for the graph stage
        {"t_s": 13.5, "judge": 0, "graph": 0, "idle": 0},
    ]
    out = group_drain(groups, stopped_s=10.0)
    assert out["judge"] == {"at_stop": 40, "cleared_after_s": 2.5}
    assert out["graph"] == {"at_stop": 5, "cleared_after_s": 3.5}
    assert out["idle"] == {"at_stop": 0, "cleared_after_s": 0.0}
    assert group_drain(groups, stopped_s=20.0) == {}


def test_cpu_split_counts_the_drain() -> None:
    samples = [Sample(float(t), 100.0, 100.0, 2.0 * t, 0) for t in range(-2, 16)]
    assert cpu_split(samples, seconds=10.0) == {"load": 20.0, "drain": 10.0, "total": 30.0}
    assert cpu_split(samples[:2], seconds=10.0) is None
