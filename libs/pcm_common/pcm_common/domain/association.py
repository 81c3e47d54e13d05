"""Associative recall: spreading activation at retrieval time (the mnemos write-up's
SpreadingActivation; Collins & Loftus 1975). Pure functions, no I/O.

The best memories of a recall are seeds. Each gets energy: the best one 1.0, the others in
proportion to their score. Energy then spreads breadth-first over the edges of the memories
it reaches (similar memories, the memories next to it in its episode, memories naming the
same entities), losing `decay` of itself on every hop, times the edge's weight. A memory
reached along several paths keeps the most energy any of them brings. Spreading stops where
the energy a hop would bring falls below `min_energy`, or after `max_hops`.

With the defaults (1.0, 20% per hop, 0.3) a seed's energy crosses at most five unit-weight
hops (0.8, 0.64, 0.51, 0.41, 0.33); the caller bounds the hops it pays for with `max_hops`.

The edges are not stored: the recall service reads a hop's edges when it gets there
(`pcm_recall.associations`), so the loop is `frontier` -> read edges -> `step`, and `spread`
runs the same loop over a graph given whole (tests, offline evaluation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

START_ENERGY = 1.0  # *start*
DECAY = 0.2  # *start*: a hop keeps 80%
MIN_ENERGY = 0.3  # *start*

# The kinds of edge, as the answer's `via` names them.
SIMILAR = "similar"
EPISODE = "episode"
GRAPH = "graph"
SEED = "seed"


@dataclass(frozen=True)
class Edge:
    """An association from one memory to `target`, of a `kind`, with a weight in (0, 1]."""

    target: str
    kind: str
    weight: float = 1.0


@dataclass(frozen=True)
class Reached:
    """A memory the spreading reached: its energy, the kind of the edge that brought the
    most, the memory that edge came from (None for a seed), and after how many hops."""

    memory_id: str
    energy: float
    via: str
    source: str | None
    hops: int


def seed_energies(
    scores: Sequence[tuple[str, float]], start: float = START_ENERGY
) -> dict[str, float]:
    """The seeds' energies from their (id, score), best first: the best gets `start`, the
    others `start` times their share of the best score (a score of 0 or less: nothing)."""
    if not scores:
        return {}
    best = max(s for _, s in scores)
    out: dict[str, float] = {}
    for mid, s in scores:
        if mid in out:
            continue
        out[mid] = start if best <= 0.0 else start * max(min(s / best, 1.0), 0.0)
    return {m: e for m, e in out.items() if e > 0.0}


def seeded(energies: Mapping[str, float]) -> dict[str, Reached]:
    """The reached set before the first hop: the seeds themselves."""
    return {m: Reached(m, e, SEED, None, 0) for m, e in energies.items()}


def frontier(
    reached: Mapping[str, Reached],
    expanded: set[str],
    *,
    decay: float = DECAY,
    min_energy: float = MIN_ENERGY,
    limit: int | None = None,
) -> list[str]:
    """The memories whose edges the next hop reads: reached, not yet expanded, and with
    energy enough that a hop of full weight still brings `min_energy`; the most energetic
    first, at most `limit` (ties by id, so the choice is deterministic)."""
    keep = 1.0 - decay
    ready = [r for m, r in reached.items() if m not in expanded and r.energy * keep >= min_energy]
    ready.sort(key=lambda r: (-r.energy, r.memory_id))
    return [r.memory_id for r in (ready if limit is None else ready[:limit])]


def step(
    reached: Mapping[str, Reached],
    sources: Sequence[str],
    edges: Mapping[str, Sequence[Edge]],
    *,
    decay: float = DECAY,
    min_energy: float = MIN_ENERGY,
) -> dict[str, Reached]:
    """One hop: energy from each of `sources` along its `edges`. Returns the reached set
    with what the hop brought: a new memory, or more energy to one reached before (its
    `via` becomes the stronger path's). A memory never gains energy from itself, and a
    hop that brings less than `min_energy` brings nothing."""
    out = dict(reached)
    keep = 1.0 - decay
    for src in sources:
        here = reached.get(src)
        if here is None:
            continue
        for e in edges.get(src, ()):
            if e.target == src or e.weight <= 0.0:
                continue
            energy = here.energy * keep * min(e.weight, 1.0)
            if energy < min_energy:
                continue
            have = out.get(e.target)
            if have is None or energy > have.energy:
                out[e.target] = Reached(e.target, energy, e.kind, src, here.hops + 1)
    return out


def spread(
    seeds: Mapping[str, float],
    edges: Mapping[str, Sequence[Edge]],
    *,
    decay: float = DECAY,
    min_energy: float = MIN_ENERGY,
    max_hops: int = 5,
    frontier_size: int | None = None,
) -> dict[str, Reached]:
    """Spreading over a graph given whole (memory -> its edges): the seeds and every
    memory reached, with its energy and path."""
    reached = seeded(seeds)
    expanded: set[str] = set()
    for _ in range(max_hops):
        todo = frontier(reached, expanded, decay=decay, min_energy=min_energy, limit=frontier_size)
        if not todo:
            break
        expanded.update(todo)
        reached = step(reached, todo, edges, decay=decay, min_energy=min_energy)
    return reached


def associations(reached: Mapping[str, Reached], shown: set[str], limit: int) -> list[Reached]:
    """What the answer adds: the memories reached that it does not show already (seeds are
    shown), the most energetic first, at most `limit`."""
    out = [r for m, r in reached.items() if r.hops > 0 and m not in shown]
    out.sort(key=lambda r: (-r.energy, r.hops, r.memory_id))
    return out[:limit]
