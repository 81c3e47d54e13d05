"""The dense mirror (`pcm_common.stores.qdrant.edge.dense_mirror`) answers a search as the
port's own filter semantics (`payload_matches`) and a cosine over every point would."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from pcm_common.domain.figures import FIGURES_KEY
from pcm_common.stores.qdrant.edge import dense_mirror
from pcm_common.stores.qdrant.edge.dense_mirror import DenseMirror
from pcm_common.stores.vectors import Filter, SearchQuery, payload_matches

DIM = 6
SCOPES = ("global", "workspace", "project")


def _payload(rng: random.Random) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "scope": rng.choice(SCOPES),
        "workspace": rng.choice(["", "w1", "w2"]),
        "state": rng.choice(["active", "superseded", "archived"]),
        "source": rng.choice(["api", "hook", "consolidation"]),
        "user_id": rng.choice([None, "u1", "u2"]),
        "created_ts": rng.choice([rng.uniform(0, 100), rng.randint(0, 100), None, "x"]),
        FIGURES_KEY: rng.choice([None, "5k|27:10", "5k|41:30"]),
        "text": "not mirrored",
    }
    if rng.random() < 0.2:
        del payload["user_id"]
    return payload


def _filter(rng: random.Random) -> Filter:
    return Filter(
        must=({"scope": rng.choice(SCOPES)} if rng.random() < 0.7 else {})
        | rng.choice([{}, {"user_id": ["u1", None]}]),  # a user's own or no user's
        must_not=rng.choice(
            [{}, {"state": "superseded", "source": "consolidation"}, {"state": ["archived"]}]
        ),
        ranges=rng.choice(
            [{}, {"created_ts": (None, rng.uniform(0, 100))}, {"created_ts": (20.0, 80.0)}]
        ),
        should=rng.choice(
            [[], [{FIGURES_KEY: "5k|27:10"}, {FIGURES_KEY: None}], [{"user_id": "u1"}]]
        ),
    )


def _reference(
    points: dict[str, tuple[list[float], dict[str, Any]]], q: SearchQuery
) -> list[tuple[str, float]]:
    v = np.asarray(q.vector, np.float64)
    hits = []
    for pid, (vec, payload) in points.items():
        w = np.asarray(vec, np.float64)
        score = float(v @ w / (np.linalg.norm(v) * np.linalg.norm(w)))
        if (q.flt is None or payload_matches(q.flt, payload)) and q.keeps(score):
            hits.append((pid, score))
    hits.sort(key=lambda h: -h[1])
    return hits[: q.limit]


def test_search_matches_the_port_filter_semantics_and_cosine() -> None:
    rng = random.Random(7)
    mirror = DenseMirror(DIM, 10_000)
    assert mirror.load("t", [])
    points: dict[str, tuple[list[float], dict[str, Any]]] = {}
    for step in range(30):
        batch = []
        for _ in range(15):
            pid = (
                rng.choice(list(points))
                if points and rng.random() < 0.2
                else f"p{len(points)}-{step}"
            )
            vec = [rng.gauss(0, 1) for _ in range(DIM)]
            payload = _payload(rng)
            points[pid] = (vec, payload)
            batch.append((pid, "t", vec, payload))
        mirror.put(batch)
        if step % 3 == 0:
            gone = rng.sample(sorted(points), 4)
            mirror.remove(gone)
            for pid in gone:
                del points[pid]
        if step % 4 == 0:
            moved = rng.sample(sorted(points), 5)
            mirror.patch(moved, {"state": "superseded", "text": "ignored"})
            for pid in moved:
                points[pid][1]["state"] = "superseded"
        queries = [
            SearchQuery(
                "t",
                [rng.gauss(0, 1) for _ in range(DIM)],
                limit=rng.choice([1, 4, 12, 1000]),
                flt=_filter(rng),
                min_score=rng.choice([None, 0.0, 0.45]),
            )
            for _ in range(8)
        ]
        for q, found in zip(queries, mirror.search(queries), strict=True):
            want = _reference(points, q)
            assert found is not None
            assert [i for i, _ in found] == [i for i, _ in want]
            assert np.allclose([s for _, s in found], [s for _, s in want], atol=1e-5)
    assert len(mirror) == len(points)


def test_filters_on_other_fields_are_the_engines() -> None:
    assert DenseMirror.answers(None)
    assert DenseMirror.answers(Filter(must={"scope": "global", "user_id": None}))
    assert DenseMirror.answers(Filter(must={"user_id": ["u1", None]}))
    assert DenseMirror.answers(Filter(ranges={"created_ts": (None, 5.0)}))
    assert not DenseMirror.answers(Filter(must={"pinned": True}))
    assert not DenseMirror.answers(Filter(must={"time_keys": ["y2026"]}))
    assert not DenseMirror.answers(Filter(ranges={"strength.s_ref": (0.1, None)}))
    assert not DenseMirror.answers(Filter(must={"created_ts": 5.0}))
    assert not DenseMirror.answers(Filter(must={"scope": 3}))  # only strings are keywords


def test_capacity_and_unrepresentable_values_leave_a_tenant_to_the_engine() -> None:
    mirror = DenseMirror(DIM, 3)
    vec = [1.0] + [0.0] * (DIM - 1)
    assert not mirror.load("big", [(f"p{i}", vec, {}) for i in range(4)])
    assert not mirror.covers("big") and len(mirror) == 0
    assert mirror.load("small", [("a", vec, {}), ("b", vec, {})])
    mirror.put([("c", "small", vec, {})])
    assert len(mirror) == 3
    mirror.put([("d", "small", vec, {})])  # one too many: the tenant leaves the mirror
    assert not mirror.covers("small") and len(mirror) == 0

    mirror = DenseMirror(DIM, 100)
    assert not mirror.load("t", [("a", vec, {"scope": ["global", "project"]})])
    assert mirror.load("t", [("a", vec, {"scope": "global"})])
    mirror.patch(["a"], {"state": {"nested": 1}})
    assert not mirror.covers("t")
    q = SearchQuery("t", vec, limit=3)
    assert mirror.search([q]) == [None]  # the caller asks the engine instead


def test_a_point_moves_between_tenants_and_rows_are_never_rewritten_in_place() -> None:
    mirror = DenseMirror(DIM, 100)
    vec = [1.0] + [0.0] * (DIM - 1)
    other = [0.0, 1.0] + [0.0] * (DIM - 2)
    assert mirror.load("a", []) and mirror.load("b", [])
    mirror.put([("p", "a", vec, {"scope": "global"})])
    table = mirror._tables["a"]
    first = table.rows["p"]
    mirror.put([("p", "a", other, {"scope": "global"})])
    assert table.rows["p"] != first and not table.alive[first]
    assert np.allclose(table.vectors[first], vec)  # a search still reading it sees the old point
    mirror.put([("p", "b", vec, {"scope": "global"})])
    q = [SearchQuery("a", vec, limit=5), SearchQuery("b", vec, limit=5)]
    assert mirror.search(q) == [[], [("p", pytest.approx(1.0))]]
    mirror.remove(["p"])
    assert mirror.search(q) == [[], []]


def test_writes_during_a_search_never_give_it_a_rewritten_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Writes land while a search's NumPy work runs (outside the mirror's lock): a point
    written again keeps the score of the row the search read, a deleted one is left out,
    and no row the search may read is handed to another point until it is done."""
    mirror = DenseMirror(DIM, 100)
    e = np.eye(DIM).tolist()
    assert mirror.load("t", [("a", e[0], {}), ("b", e[0], {}), ("c", e[1], {})])
    table = mirror._tables["t"]
    rows_before = dict(table.rows)
    real = dense_mirror._pick

    def pick(*args: Any) -> Any:
        mirror.put([("a", "t", e[2], {})])  # a written again, far from the query now
        mirror.remove(["b"])
        mirror.put([("d", "t", e[0], {})])  # must not take a's or b's old row
        assert not set(rows_before.values()) & {table.rows["a"], table.rows["d"]}
        return real(*args)

    monkeypatch.setattr(dense_mirror, "_pick", pick)
    (hits,) = mirror.search([SearchQuery("t", e[0], limit=5)])
    assert hits == [("a", pytest.approx(1.0)), ("c", pytest.approx(0.0))]
    monkeypatch.setattr(dense_mirror, "_pick", real)
    (hits,) = mirror.search([SearchQuery("t", e[0], limit=5)])
    assert [i for i, _ in hits] == ["d", "c", "a"]
    mirror.put([("f", "t", e[3], {})])  # no search running: freed rows are reused now
    assert table.rows["f"] in rows_before.values()
