"""A few seconds of `bench.load` (the full run: `make bench-load`, docs/benchmarks.md) so
the harness cannot rot: the server in a child process found and sampled, every operation
sent, nothing failing, the pipeline drained, the chart written."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bench.load import parser, result_line, run_variant
from tests.conftest import NEO4J_URI, TEST_REDIS


@pytest.mark.slow
async def test_a_short_load_run(tmp_path: Path) -> None:
    args = parser().parse_args(
        [
            *("--duration", "5", "--tenants", "1", "--clients", "2"),
            *("--seed-memories", "10", "--idle-recalls", "3", "--batch", "5"),
            *("--mix", "write=1,batch=1,recall=1", "--sample-s", "0.5", "--quiet"),
        ]
    )
    env = {
        "REDIS_URL": f"{TEST_REDIS}/13",
        "NEO4J_URI": NEO4J_URI,
        "PCM_ENV": "dev",
        "PCM_LOG_LEVEL": "WARNING",
        "PCM_JOB_INTERVAL_S": "1000000000",
    }
    svg = tmp_path / "load.svg"
    res = await run_variant(args, env, {}, svg)

    ops = res["ops"]
    assert set(ops) == {"write", "batch", "recall", "all"}, result_line("smoke", res)
    assert all(ops[op]["count"] > 0 for op in ("write", "batch", "recall")), ops
    assert ops["all"]["errors"] == {}, ops
    assert ops["all"]["count"] == sum(ops[op]["count"] for op in ("write", "batch", "recall"))
    # Every write was answered with a memory's status (the seeding is not counted).
    assert res["memories_written"] == ops["write"]["count"] + 5 * ops["batch"]["count"]
    assert res["drain_s"] is not None and res["duration_s"] >= 5.0
    # The server process (a child of this one) was read: memory, CPU and backlog.
    assert res["samples"] and all(s["rss_mb"] > 0 for s in res["samples"])
    assert res["cpu_ms_per_request"] and res["cpu_ms_per_request"] > 0
    assert res["rss"]["first_mb"] > 0
    root = ET.fromstring(svg.read_text())
    assert root.findall("{http://www.w3.org/2000/svg}polyline")
