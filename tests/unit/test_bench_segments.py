"""The ingest benchmark says, per segment, which consumer group the wait after the last
acknowledgement was for and how busy the machine was (session 17 found the surprisal judge
finishing last with one core idle)."""

from __future__ import annotations

from bench.common import CpuTicks, cpu_shares, cpu_ticks, note_cleared
from bench.latency import segment_line
from pcm_common.messaging.bus import group_backlogs


def _status(**groups: tuple[int, int]) -> dict[str, object]:
    return {
        "pending": sum(lag + pending for lag, pending in groups.values()),
        "streams": {
            "pcm.memory.written": {
                "length": 9,
                "groups": {g: {"lag": lag, "pending": p} for g, (lag, p) in groups.items()},
            }
        },
    }


def test_group_backlogs_add_lag_and_pending() -> None:
    status = _status(**{"graph-extractor": (3, 2), "sweeper-written": (0, 0)})
    assert group_backlogs(status) == {"graph-extractor": 5, "sweeper-written": 0}
    assert group_backlogs({"pending": 0}) == {}


def test_note_cleared_keeps_the_last_time_each_busy_group_reached_zero() -> None:
    cleared: dict[str, float | None] = {}
    note_cleared(cleared, {"a": 4, "b": 2, "idle": 0}, 0.0)
    note_cleared(cleared, {"a": 0, "b": 1, "idle": 0}, 0.5)
    note_cleared(cleared, {"a": 1, "b": 0, "idle": 0}, 1.0)  # new work for a
    note_cleared(cleared, {"a": 0, "b": 0, "idle": 0}, 1.5)
    assert cleared == {"a": 1.5, "b": 1.0}


def test_cpu_shares_of_two_readings() -> None:
    before, after = CpuTicks(100, 10, 400), CpuTicks(250, 30, 600)
    assert cpu_shares(before, after) == {"busy": 0.75, "steal": 0.1}
    assert cpu_shares(None, after) is None
    assert cpu_shares(before, before) is None
    now = cpu_ticks()
    assert now is None or 0 <= now.busy + now.steal <= now.total


def test_segment_line_names_the_last_groups() -> None:
    seg = {
        "settled_per_s": 150.0,
        "acked_per_s": 200.0,
        "cpu_ms_per_memory": 10.0,
        "cores_busy": 0.81,
        "cpu_steal": 0.04,
        "cleared_after_ack_s": {"graph-extractor": 0.4, "sweeper-written": 2.3},
    }
    line = segment_line(seg)
    assert "cores busy 81%, stolen 4%" in line
    assert line.endswith(
        "; done after the last acknowledgement: sweeper-written 2.3, graph-extractor 0.4 s)"
    )
    bare = segment_line({**seg, "cores_busy": None, "cpu_steal": 0.0, "cleared_after_ack_s": {}})
    assert bare == "150.0 memories/s settled (200.0/s acknowledged, 10.0 ms CPU per memory)"
