"""The garbage collector's settings for a long-running PCM process.

CPython's defaults (a young collection every 700 net container allocations, a full one when
the survivors since the last grew by a quarter) are made for short scripts. A PCM process
holds ~500k long-lived objects from its imports (spaCy's vocabulary, litellm's model map,
pydantic's schemas) plus its parse caches, and every full collection walked them all, while
the stream handlers allocate fast enough for thousands of young collections per 10k
memories, all of it finding no garbage worth the walk (docs/decisions/0042-gc-tuning.md).

`tune` moves what exists after start-up into the permanent generation (`gc.freeze`, never
walked again) and raises the young threshold. Cycles still get collected, just in fewer,
larger passes.
"""

from __future__ import annotations

import gc


def tune(*, freeze: bool, gen0_threshold: int) -> None:
    """Call once, after the process has loaded its models and started its consumers.

    `gen0_threshold` 0 keeps Python's own; the older generations' thresholds are kept."""
    if freeze:
        gc.collect()  # what is garbage now must not be frozen with the rest
        gc.freeze()
    if gen0_threshold > 0:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gen0_threshold, gen1, gen2)
