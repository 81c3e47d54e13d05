"""The collector settings a PCM process runs with (in a child interpreter: they are global)."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import gc, json
from pcm_common.runtime import gc_tuning
before = (gc.get_freeze_count(), gc.get_threshold())
gc_tuning.tune(freeze={freeze}, gen0_threshold={gen0})
print(json.dumps([before, [gc.get_freeze_count(), gc.get_threshold()]]))
"""


def _run(freeze: bool, gen0: int) -> list[list[object]]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(freeze=freeze, gen0=gen0)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_tune_freezes_startup_objects_and_raises_the_young_threshold() -> None:
    (frozen0, th0), (frozen1, th1) = _run(True, 50_000)
    assert frozen0 == 0 and frozen1 > 1_000, "what the imports made is frozen"
    assert th1 == [50_000, th0[1], th0[2]], "older generations keep their thresholds"


def test_tune_can_leave_the_collector_alone() -> None:
    (frozen0, th0), (frozen1, th1) = _run(False, 0)
    assert frozen1 == frozen0 == 0 and th1 == th0
