"""Routine kin of memories about to be judged (`pcm_common.domain.kin`): read from the
routine index and the vector store in a few round trips per tenant for a whole batch. A
memory without a family gets its routine's entries only where the routine expects it now
(`near_kin`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pcm_common.domain import kin as kin_rules
from pcm_common.domain import surprisal as sp
from pcm_common.domain import visibility
from pcm_common.models.sparse import tokenize
from pcm_common.ports import RoutinePorts
from pcm_common.stores.vectors import Filter, ScoredPoint, SearchQuery


@dataclass(frozen=True)
class Kinship:
    """What the routine index says of a family: the routine's entries it lacks (`kin`,
    nearest first) and its members that the index places in another routine (`foreign`)."""

    kin: list[ScoredPoint] = field(default_factory=list)
    foreign: frozenset[str] = frozenset()


_Item = tuple[str, ScoredPoint, list[ScoredPoint], float]  # (tenant, point, family, created_ts)


async def routine_kin(
    res: RoutinePorts,
    items: Sequence[_Item],
    *,
    fields: Sequence[str],
    max_size: int,
) -> list[Kinship]:
    """For each (tenant, point, family, created_ts): earlier entries of the routine its
    family belongs to that are not in the family, at most `max_size` minus the family's
    size, and the family members of other routines. Empty when the family belongs to no
    routine."""
    out: list[Kinship] = [Kinship() for _ in items]
    by_tenant: dict[str, list[int]] = {}
    alone: dict[str, list[int]] = {}  # no family at all
    for n, (tenant, point, family, _) in enumerate(items):
        if point.vector is None or len(family) >= max_size:
            continue
        (by_tenant if family else alone).setdefault(tenant, []).append(n)
    for tenant, ns in by_tenant.items():
        await _tenant_kin(res, tenant, items, ns, out, fields=fields, max_size=max_size)
    for tenant, ns in alone.items():
        await near_kin(res, tenant, items, ns, out, fields=fields, max_size=max_size)
    return out


async def _tenant_kin(
    res: RoutinePorts,
    tenant: str,
    items: Sequence[_Item],
    ns: list[int],
    out: list[Kinship],
    *,
    fields: Sequence[str],
    max_size: int,
) -> None:
    """`out[n]` for the items `ns` of one tenant: a few round trips for them all."""
    member_ids = list(dict.fromkeys(f.id for n in ns for f in items[n][2]))
    routine_of = await res.routines.routine_of(tenant, member_ids)
    chosen, foreign = _family_routines(items, ns, routine_of)
    for n in chosen:
        out[n] = Kinship(foreign=foreign[n])
    if not chosen:
        return
    wanted = await _missing_entries(res, tenant, items, chosen, routine_of, max_size)
    all_ids = list(dict.fromkeys(m for ids in wanted.values() for m in ids))
    if not all_ids:
        return
    found = {
        p.id: p for p in await res.vectors.get(tenant, all_ids, with_vectors=True, fields=fields)
    }
    for n, ids in wanted.items():
        _, point, family, cut = items[n]
        kin = _nearest(point, [found[m] for m in ids if m in found], cut)
        out[n] = Kinship(kin[: max_size - len(family)], foreign[n])


def _family_routines(
    items: Sequence[_Item], ns: list[int], routine_of: dict[str, str | None]
) -> tuple[dict[int, str], dict[int, frozenset[str]]]:
    """The routine each family belongs to (`kin_routine`), where it belongs to one, and its
    members that the index places in another routine."""
    chosen: dict[int, str] = {}
    foreign: dict[int, frozenset[str]] = {}
    for n in ns:
        family = items[n][2]
        r = kin_rules.kin_routine([(f.id, f.score) for f in family], routine_of)
        if r is not None:
            chosen[n] = r
            foreign[n] = frozenset(f.id for f in family if routine_of.get(f.id) not in (None, r))
    return chosen, foreign


async def _missing_entries(
    res: RoutinePorts,
    tenant: str,
    items: Sequence[_Item],
    chosen: dict[int, str],
    routine_of: dict[str, str | None],
    max_size: int,
) -> dict[int, list[str]]:
    """For each family with a routine, the ids of its routine's entries written before it
    that it lacks, latest first."""
    seeds = {r: next(m for m, rr in routine_of.items() if rr == r) for r in chosen.values()}
    latest_cut = max(items[n][3] for n in chosen)
    routines = await res.routines.routines(
        tenant, list(seeds.values()), latest_cut, latest=4 * max_size, known=routine_of
    )
    entries = {rt.id: rt.entries for rt in routines}
    wanted: dict[int, list[str]] = {}
    for n, r in chosen.items():
        _, point, family, cut = items[n]
        have = {f.id for f in family} | {point.id}
        ids = [m for m, ts in entries.get(r, []) if ts < cut - sp.SIMULTANEOUS_S]
        wanted[n] = [m for m in dict.fromkeys(reversed(ids)) if m not in have]
    return wanted


def _nearest(point: ScoredPoint, others: list[ScoredPoint], cut: float) -> list[ScoredPoint]:
    """Those of `others` eligible as `point`'s family members and close enough to it
    (`KIN_MIN_COS`), scored by their cosine, nearest first."""
    kin: list[ScoredPoint] = []
    for p in others:
        if p.vector is None or not _eligible(point, p, cut):
            continue
        cos = kin_rules.cosine(point.vector or [], p.vector)
        if cos >= kin_rules.KIN_MIN_COS:
            kin.append(ScoredPoint(p.id, cos, p.payload))
    kin.sort(key=lambda p: -p.score)
    return kin


def _eligible(point: ScoredPoint, other: ScoredPoint, cut: float) -> bool:
    """What the family search itself requires of a member: the same group, strictly
    earlier, neither superseded nor a consolidated record."""
    pl = other.payload
    ts = pl.get("created_ts")
    return (
        visibility.same_group(pl, point.payload)
        and isinstance(ts, int | float)
        and ts < cut - sp.SIMULTANEOUS_S
        and pl.get("state") != "superseded"
        and pl.get("source") != "consolidation"
    )


async def near_kin(
    res: RoutinePorts,
    tenant: str,
    items: Sequence[_Item],
    ns: list[int],
    out: list[Kinship],
    *,
    fields: Sequence[str],
    max_size: int,
) -> None:
    """`out[n]` for the family-less items `ns` of one tenant: the entries of the routine
    their nearer neighbours point to (`kin_rules.near_routine`), where that routine is
    regular and due when the item was written (`kin_rules.on_schedule`)."""
    found = await res.vectors.search_many(
        [_near_query(tenant, items[n][1], items[n][3]) for n in ns], fields=fields
    )
    hit_ids = list(dict.fromkeys(h.id for hits in found for h in hits))
    if not hit_ids:
        return
    routine_of = await res.routines.routine_of(tenant, hit_ids)
    chosen: dict[int, str] = {}
    for n, hits in zip(ns, found, strict=True):
        words = _words(items[n][1])
        near = [(h.id, h.score) for h in hits if words & _words(h)]
        if r := kin_rules.near_routine(near, routine_of):
            chosen[n] = r
    if not chosen:
        return
    seeds = {r: next(m for m, rr in routine_of.items() if rr == r) for r in chosen.values()}
    routines = await res.routines.routines(
        tenant,
        list(seeds.values()),
        max(items[n][3] for n in chosen),
        latest=4 * max_size,
        known=routine_of,
    )
    entries = {rt.id: rt.entries for rt in routines}
    wanted: dict[int, list[str]] = {}
    for n, r in chosen.items():
        cut = items[n][3] - sp.SIMULTANEOUS_S
        before = [(m, ts) for m, ts in entries.get(r, []) if ts < cut]
        if kin_rules.on_schedule([ts for _, ts in before], items[n][3]):
            wanted[n] = [m for m, _ in reversed(before)]
    ids = list(dict.fromkeys(m for got in wanted.values() for m in got))
    if not ids:
        return
    points = {p.id: p for p in await res.vectors.get(tenant, ids, with_vectors=True, fields=fields)}
    for n, got in wanted.items():
        _, point, _, cut = items[n]
        out[n] = Kinship(_nearest(point, [points[m] for m in got if m in points], cut)[:max_size])


def _words(point: ScoredPoint) -> set[str]:
    """The stemmed words of a point's text, without figures: a routine's next entry that
    names a new place, person or provider still names the event ("rent", "call", "pages");
    a bill that only shares a dollar sign with it does not."""
    return {t for t in tokenize(str(point.payload.get("text") or "")) if t.isalpha()}


def _near_query(tenant: str, point: ScoredPoint, cut: float) -> SearchQuery:
    """The memories of `point`'s group written before it, down to `NEAR_MIN_COS`."""
    return SearchQuery(
        tenant,
        point.vector or [],
        limit=2 * kin_rules.NEAR_MIN_HITS + 2,
        flt=Filter(
            must=visibility.peers(point.payload),
            ranges={"created_ts": (None, cut - sp.SIMULTANEOUS_S)},
            must_not={"state": "superseded", "source": "consolidation"},
        ),
        min_score=kin_rules.NEAR_MIN_COS,
    )
