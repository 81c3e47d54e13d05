"""Routine kin of memories about to be judged (`pcm_common.domain.kin`): read from the
routine index and the vector store in a few round trips per tenant for a whole batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pcm_common.domain import kin as kin_rules
from pcm_common.domain import surprisal as sp
from pcm_common.domain import visibility
from pcm_common.ports import RoutinePorts
from pcm_common.stores.vectors import ScoredPoint


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
    for n, (tenant, point, family, _) in enumerate(items):
        if family and point.vector is not None and len(family) < max_size:
            by_tenant.setdefault(tenant, []).append(n)
    for tenant, ns in by_tenant.items():
        await _tenant_kin(res, tenant, items, ns, out, fields=fields, max_size=max_size)
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
