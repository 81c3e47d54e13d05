"""Near-duplicates among the new items of one write request (`pcm_ingest.batch_twins`)."""

from __future__ import annotations

import numpy as np

from pcm_ingest.batch_twins import earlier_twins


def _near(v: np.ndarray, angle: float, other: np.ndarray) -> list[float]:
    """A unit vector at `angle` radians from unit `v`, towards `other`."""
    w = other - (other @ v) * v
    w /= np.linalg.norm(w)
    return (np.cos(angle) * v + np.sin(angle) * w).tolist()


def test_a_repeat_merges_into_the_earliest_kept_item_of_its_key() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal(8)
    a /= np.linalg.norm(a)
    o = rng.standard_normal(8)
    vecs = [a.tolist(), _near(a, 0.2, o), _near(a, 0.45, o), a.tolist(), a.tolist()]
    # cos(a, 0.2 rad) = 0.980; cos(a, 0.45 rad) = 0.900 (below 0.94, though 0.97 from #1).
    texts = ["ran 5k in 27:10"] * 3 + ["ran 5k in 27:10", "ran 5k in 27:10 with Ana"]
    keys = ["k", "k", "k", "other key", "k"]
    got = earlier_twins(keys, vecs, texts, 0.94)
    # #1 repeats #0; #2 is compared with kept items only (#0), so it stays; #3 has another
    # key (scope or figures); #4 adds a name, another event.
    assert got == {1: 0}


def test_nothing_to_compare() -> None:
    assert earlier_twins([], [], [], 0.94) == {}
    assert earlier_twins(["k"], [[1.0, 0.0]], ["x"], 0.94) == {}
