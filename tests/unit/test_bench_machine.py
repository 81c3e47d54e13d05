"""Benchmark results name the machine they ran on: the processor and a MiniLM calibration
(session 7 ran the same code at 2.6x slower embedding than session 6), and tables made from
older results, which lack both, still render."""

from __future__ import annotations

from bench.common import cpu_model, embed_ms_per_text
from bench.report import _meta


def test_cpu_model_names_the_processor() -> None:
    name = cpu_model()
    assert name and name != "unknown"


def test_embedding_calibration_is_a_positive_time() -> None:
    ms = embed_ms_per_text(16)
    assert 0.0 < ms < 1000.0


def test_meta_line_with_and_without_calibration() -> None:
    old = {"command": "cmd", "date": "d", "machine": {"cpus": 2, "loadavg_1m_at_end": 1.5}}
    assert _meta(old) == "Command: `cmd` — d, 2 CPUs, load average 1.5 at the end."
    new = {
        "command": "cmd",
        "date": "d",
        "machine": {
            "cpus": 2,
            "loadavg_1m_at_end": 1.5,
            "cpu": "AMD EPYC @ 2445 MHz",
            "embed_ms_per_text": 6.8,
        },
    }
    assert _meta(new) == (
        "Command: `cmd` — d, 2 CPUs, load average 1.5 at the end; AMD EPYC @ 2445 MHz, "
        "MiniLM 6.8 ms CPU per short text (one thread)."
    )
