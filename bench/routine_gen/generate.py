"""Builds one dataset: personas, their routines' dated entries, misc memories and questions.

Every random choice comes from a ``random.Random`` seeded with a string built from the seed,
the split, the persona and the purpose, so a dataset depends only on its arguments, and the
plain and absence variants of one seed differ only in the dates of the stopped routines.
"""

from __future__ import annotations

import calendar
import random
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from . import kinds as K
from .phrasings import Phrasebook, expand_choices, load
from .quantities import (
    Clock,
    Count,
    Currency,
    Duration,
    Measure,
    Money,
    Reading,
    Serial,
    Text,
    Version,
)
from .textstats import shares_content_word

GENERATOR_VERSION = "routine_gen 1.0"
DEFAULT_SEED = 20261204
# The seed each split's frozen files in data/ were written with.
FROZEN_SEEDS: dict[str, int] = {
    "tune": DEFAULT_SEED,
    "heldout": DEFAULT_SEED,
    "valid": DEFAULT_SEED,
    "blind": 20261205,
    "blind2": 20261206,
    "blind3": 20261207,
    "blind4": 20261208,
    "blind5": 20261209,
}
VARIANTS: dict[str, str] = {"plain": "outliers", "absence": "outliers_absence"}
ROUTINES_PER_PERSONA = 8
STOPPED_PER_PERSONA = 2
FIRST_ANCHOR = date(2025, 2, 3)
PERSONA_SPACING_DAYS = 9
ANCHOR_CYCLE = 40  # personas past this reuse earlier end dates, keeping all dates in the past
OUTLIER_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("value", "value", "category", "content"),
    ("value", "category", "category", "content"),
    ("value", "category", "content", "content"),
)
NOTE = (
    "Gold labels (routine_id, routine_key, is_outlier, outlier_kind, expected) are for "
    "scoring only and must never be sent to the system under test; send only text, "
    "created_at and memory_id."
)

Fields = dict[str, object]


def rng_for(*parts: object) -> random.Random:
    """A generator seeded by a readable string, stable across runs and platforms."""
    return random.Random(":".join(str(part) for part in parts))


@dataclass
class Entry:
    """One dated routine memory."""

    text: str
    when: datetime
    outlier_kind: str | None


@dataclass
class Routine:
    """A persona's routine with its entries and its everyday question."""

    kind: K.Kind
    routine_id: str
    status: str
    outlier_kind: str | None
    skip: bool
    entries: list[Entry]
    question: str
    asked_at: datetime
    missed: int


@dataclass
class Persona:
    """One synthetic person."""

    persona_id: str
    profile: K.Profile
    currency: Currency
    routines: list[Routine]
    misc: list[tuple[str, datetime]]


# ---------------------------------------------------------------------------- calendar


def month_back(day: date, months: int = 1) -> date:
    """The same day of an earlier month (days are kept at 28 or below by the caller)."""
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def step_back(day: date, cadence: str, gap: int) -> date:
    """The previous due day of a cadence; ``gap`` is used by the every-few-days cadence."""
    if cadence == "daily":
        return day - timedelta(days=1)
    if cadence == "weekdays":
        day -= timedelta(days=1)
        while day.weekday() >= 5:
            day -= timedelta(days=1)
        return day
    if cadence == "few_days":
        return day - timedelta(days=gap)
    if cadence == "weekly":
        return day - timedelta(days=7)
    if cadence == "biweekly":
        return day - timedelta(days=14)
    if cadence == "monthly":
        return month_back(day)
    raise ValueError(f"unknown cadence {cadence!r}")


def due_last_day(kind: K.Kind, anchor: date, offset: int) -> date:
    """The day of a routine's last entry, moved onto a day the cadence allows."""
    day = anchor + timedelta(days=offset)
    if kind.cadence == "weekdays":
        while day.weekday() >= 5:
            day -= timedelta(days=1)
    if kind.cadence == "monthly" and day.day > 28:
        day = day.replace(day=28)
    return day


def series_days(
    kind: K.Kind, last: date, n: int, skip_after: int | None, gaps: list[int]
) -> list[date]:
    """n due days ending at ``last``; one due day is missed after index ``skip_after``."""
    days = [last]
    gap_iter = iter(gaps)
    while len(days) < n:
        index_placed = n - len(days)  # ascending index of the earliest day placed so far
        day = step_back(days[-1], kind.cadence, next(gap_iter))
        if skip_after is not None and index_placed - 1 == skip_after:
            day = step_back(day, kind.cadence, next(gap_iter))
        days.append(day)
    return days[::-1]


def at_minute(day: date, minute: float) -> datetime:
    minute = min(max(round(minute), 0), 24 * 60 - 1)
    return datetime.combine(day, time(minute // 60, minute % 60))


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:00Z")


# ---------------------------------------------------------------------------- values


def nice_amount(value: float, style: str, cur: Currency) -> float:
    """Round a fixed price the way such prices are set (whole tens, .99 and so on)."""
    if style == "whole10":
        step = 10 * cur.nice_step
        return max(step, round(value / step) * step)
    if style == "whole":
        return max(cur.nice_step, round(value / cur.nice_step) * cur.nice_step)
    if style == "price99":
        whole = max(cur.nice_step, round(value / cur.nice_step) * cur.nice_step)
        return whole - (0.01 if cur.decimals else cur.nice_step / 10)
    return value


def draw_base(
    q: K.Quantity, kind: K.Kind, slots: dict[str, str], cur: Currency, rng: random.Random
) -> float:
    """A routine's usual value for one quantity."""
    if q.choices_by:
        return float(rng.choice(kind.linked[q.choices_by][slots[q.choices_by]]))
    if q.choices:
        return float(rng.choice(q.choices))
    value = rng.uniform(*q.base)
    if q.form == "money":
        level = cur.level**0.5 if q.price else cur.level  # fuel is priced more globally
        value = nice_amount(value * cur.rate * level, q.nice, cur)
    return value


def round_value(q: K.Quantity, value: float, cur: Currency) -> float:
    """Round a value to what the entry will show."""
    if q.name.startswith("_"):
        return value
    if q.form == "money":
        return round(value, cur.price_decimals if q.price else cur.decimals)
    if q.form == "measure":
        if q.step != 1.0:
            return round(value / q.step) * q.step
        return round(value, K.unit_for(q.unit, "metric").decimals)
    if q.form == "duration":
        return max(q.step, round(value / q.step) * q.step)
    if q.form == "count":
        return float(max(1, round(value)))
    return float(round(value))


def entry_values(
    kind: K.Kind, bases: dict[str, float], cur: Currency, rng: random.Random, factor: float | None
) -> dict[str, float]:
    """The numbers of one entry; ``factor`` moves the main quantity for a value outlier."""
    values: dict[str, float] = {}
    for q in kind.quantities:
        if q.form in ("version", "serial", "reading"):
            continue
        jitter = 1 + rng.uniform(-q.spread, q.spread)
        if q.scale_by:
            ratio = values[q.ratio_from] if q.ratio_from else bases[q.name] * jitter
            value = ratio * values[q.scale_by] / q.per
        elif q.form == "clock":
            value = bases[q.name] + rng.uniform(-q.spread, q.spread)
        else:
            value = bases[q.name] * jitter
        if factor is not None and q.name == kind.main:
            calm = 1 + rng.uniform(-q.spread / 3, q.spread / 3)
            value = bases[q.name] * factor * (1 if q.form == "clock" else calm)
        values[q.name] = round_value(q, value, cur)
    return values


def reading_values(
    q: K.Quantity, bases: dict[str, float], rng: random.Random, factor: float | None
) -> Reading:
    high = bases[q.name] * (1 + rng.uniform(-q.spread, q.spread))
    low = bases[q.name + "_low"] * (1 + rng.uniform(-q.spread, q.spread))
    if factor is not None:
        high = bases[q.name] * factor
        low = bases[q.name + "_low"] * (1 + (factor - 1) * 0.85)
    return Reading(round(high), round(low))


def version_series(n: int, rng: random.Random) -> list[Version]:
    """Release numbers that only go up: mostly patch bumps, sometimes a minor one."""
    major, minor, patch = rng.randint(1, 4), rng.randint(0, 20), rng.randint(0, 6)
    series = []
    for _ in range(n):
        series.append(Version(major, minor, patch))
        if rng.random() < 0.7:
            patch += 1
        else:
            minor, patch = minor + 1, 0
    return series


def field_objects(
    kind: K.Kind, values: dict[str, float], slots: dict[str, str], persona: K.Profile, cur: Currency
) -> Fields:
    """Slot and quantity objects a template formats."""
    fields: Fields = {name: Text(value) for name, value in slots.items()}
    for q in kind.quantities:
        if q.name.startswith("_") or q.name not in values:
            continue
        value = values[q.name]
        if q.form == "money":
            shown = value * (K.PRICE_PER_UNIT[persona.units] if q.price else 1.0)
            places = cur.price_decimals if q.price else cur.decimals
            fields[q.name] = Money(round(shown, places), cur, places)
        elif q.form == "duration":
            fields[q.name] = Duration(value)
        elif q.form == "measure":
            alt_key = q.unit + "_alt"
            alt = K.unit_for(alt_key, persona.units) if alt_key in K.UNITS else None
            fields[q.name] = Measure(value, K.unit_for(q.unit, persona.units), alt)
        elif q.form == "count":
            fields[q.name] = Count(int(value), *q.noun)
        elif q.form == "clock":
            fields[q.name] = Clock(int(value))
    return fields


def render(template: str, fields: Fields, rng: random.Random) -> str:
    text = expand_choices(template, rng).format(**fields)
    return " ".join(text.split())


def attach_note(entry: str, note: str, rng: random.Random) -> str:
    """Add a content note as a second sentence, a dash clause, a '; ' clause or brackets."""
    stem = entry[:-1] if entry.endswith(".") else entry
    forms = ["sentence", "dash", "semicolon"]
    if not stem.endswith(")"):
        forms.append("paren")
    form = rng.choice(forms)
    if form == "sentence":
        lead = entry if entry[-1] in ".!?" else entry + "."
        return f"{lead} {note[:1].upper()}{note[1:]}."
    if form == "dash":
        return f"{stem} — {note}."
    if form == "semicolon":
        return f"{stem}; {note}."
    return f"{stem} ({note})."


# ---------------------------------------------------------------------------- planning


def plan_kinds(
    n_personas: int, rng: random.Random, kinds: tuple[K.Kind, ...] = K.KINDS
) -> list[list[K.Kind]]:
    """Deal kinds to personas from a reshuffled deck so every kind is used about as often."""
    deck: list[K.Kind] = []
    plans = []
    for _ in range(n_personas):
        chosen: list[K.Kind] = []
        while len(chosen) < ROUTINES_PER_PERSONA:
            if not deck:
                deck = list(kinds)
                rng.shuffle(deck)
            kind = deck.pop()
            if kind in chosen:
                deck.insert(0, kind)
                continue
            chosen.append(kind)
        plans.append(chosen)
    return plans


def plan_outliers(n_personas: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Per persona four outlier kinds; the patterns rotate so the kinds balance."""
    order = [OUTLIER_PATTERNS[i % 3] for i in range(n_personas)]
    rng.shuffle(order)
    return order


def assign_outliers(
    kinds: list[K.Kind],
    pattern: tuple[str, ...],
    rng: random.Random,
    load: Counter[tuple[str, str]],
) -> dict[str, str]:
    """Map routine keys to outlier kinds; category only where the kind has a category slot.

    ``load`` counts outliers already planted per (kind, outlier kind) and per kind, so each
    routine kind receives outliers of every sort about equally across the dataset.
    """
    free = list(kinds)
    assigned: dict[str, str] = {}
    for outlier_kind in sorted(pattern, key=lambda k: k != "category"):
        fits = [kind for kind in free if outlier_kind in kind.outlier_kinds]
        ranked = sorted(
            fits,
            key=lambda kind: (load[kind.key, outlier_kind], load[kind.key, "any"], rng.random()),
        )
        kind = ranked[0]
        free.remove(kind)
        assigned[kind.key] = outlier_kind
        load[kind.key, outlier_kind] += 1
        load[kind.key, "any"] += 1
    return assigned


def choose_stopped(
    normal: list[str], rng: random.Random, load: Counter[tuple[str, str]]
) -> set[str]:
    """The normal routines that stop in the absence variant, spread over the kinds."""
    ranked = sorted(normal, key=lambda key: (load[key, "stopped"], rng.random()))
    chosen = set(ranked[:STOPPED_PER_PERSONA])
    for key in chosen:
        load[key, "stopped"] += 1
    return chosen


# ---------------------------------------------------------------------------- routines


@dataclass
class RoutineContext:
    """What building one routine needs to know about its persona and split."""

    persona_id: str
    profile: K.Profile
    currency: Currency
    book: Phrasebook
    seed: int
    anchor: date
    used_names: set[str]


@dataclass
class RoutinePlan:
    """Routine-level choices, drawn before any entry is written."""

    slots: dict[str, str]
    n: int
    skip_after: int | None
    outlier_kind: str | None
    outlier_at: int | None
    category_slot: str | None
    bases: dict[str, float]
    families: list[str]
    question: str
    stop_k: int
    offset: int


def pick_slots(kind: K.Kind, ctx: RoutineContext, rng: random.Random) -> dict[str, str]:
    slots = {}
    for name, pool in kind.slots.items():
        options = [value for value in pool if value not in ctx.used_names] or list(pool)
        slots[name] = rng.choice(options)
        ctx.used_names.add(slots[name])
    return slots


def draw_bases(
    kind: K.Kind, slots: dict[str, str], cur: Currency, rng: random.Random
) -> dict[str, float]:
    bases: dict[str, float] = {}
    for q in kind.quantities:
        if q.form == "reading":
            bases[q.name] = rng.uniform(*q.base)
            bases[q.name + "_low"] = rng.uniform(*q.base_low)
        elif q.form == "serial":
            bases[q.name] = float(rng.randint(int(q.base[0]), int(q.base[1])))
        elif q.form != "version":
            bases[q.name] = draw_base(q, kind, slots, cur, rng)
    return bases


def plan_routine(
    kind: K.Kind, ctx: RoutineContext, outlier_kind: str | None, rng: random.Random
) -> RoutinePlan:
    """Slots, length, skip, outlier position, families and usual values of a routine."""
    slots = pick_slots(kind, ctx, rng)
    n = rng.randint(8, 12)
    skip_after = rng.randint(2, n - 6) if rng.random() < 0.18 else None
    bases = draw_bases(kind, slots, ctx.currency, rng)
    pool = list(ctx.book.families[kind.key])
    families = rng.sample(pool, rng.randint(2, min(4, len(pool))))
    return RoutinePlan(
        slots=slots,
        n=n,
        skip_after=skip_after,
        outlier_kind=outlier_kind,
        outlier_at=rng.randint(n - 4, n - 1) if outlier_kind else None,
        category_slot=rng.choice(kind.category_slots) if kind.category_slots else None,
        bases=bases,
        families=families,
        question=rng.choice(ctx.book.questions[kind.key]),
        stop_k=rng.randint(3, 5),
        offset=rng.randint(0, 10),
    )


def family_sequence(n: int, families: list[str], rng: random.Random) -> list[str]:
    """Which family each entry uses: all of them early on, then mostly alternating."""
    first = families[:]
    rng.shuffle(first)
    sequence = first[:n]
    while len(sequence) < n:
        options = [f for f in families if f != sequence[-1]]
        if rng.random() < 0.3:
            options = families
        sequence.append(rng.choice(options))
    return sequence


def outlier_family(
    kind_of_outlier: str,
    previous: str,
    families: list[str],
    pool: tuple[str, ...],
    rng: random.Random,
) -> str:
    """The family an outlier entry is written in."""
    unused = [f for f in pool if f not in families]
    if kind_of_outlier == "category" and unused and rng.random() < 0.35:
        return rng.choice(unused)
    if kind_of_outlier == "value":
        if unused and rng.random() < 0.2:
            return rng.choice(unused)
        others = [f for f in families if f != previous]
        if others and rng.random() < 0.65:
            return rng.choice(others)
    return rng.choice(families)


def other_value(
    kind: K.Kind, slot: str, usual: str, ctx: RoutineContext, rng: random.Random
) -> str:
    options = [v for v in kind.slots[slot] if v != usual and v not in ctx.used_names]
    return rng.choice(options or [v for v in kind.slots[slot] if v != usual])


def add_special_fields(
    kind: K.Kind,
    fields: Fields,
    plan: RoutinePlan,
    index: int,
    versions: list[Version],
    factor: float | None,
    rng: random.Random,
) -> None:
    """Readings, release versions and document numbers, which are not plain numbers."""
    for q in kind.quantities:
        if q.form == "reading":
            fields[q.name] = reading_values(q, plan.bases, rng, factor)
        elif q.form == "version":
            fields[q.name] = versions[index]
        elif q.form == "serial":
            fields[q.name] = Serial("INV", int(plan.bases[q.name]) + index)


def write_entries(
    kind: K.Kind, ctx: RoutineContext, plan: RoutinePlan, rng: random.Random
) -> list[tuple[str, dict[str, float]]]:
    """The wording and numbers of every entry of a routine, the planted outlier included."""
    pool = ctx.book.families[kind.key]
    sequence = family_sequence(plan.n, plan.families, rng)
    versions = version_series(plan.n, rng)
    written = []
    for i in range(plan.n):
        outlier = plan.outlier_kind if i == plan.outlier_at else None
        factor = rng.choice(kind.factors) if outlier == "value" else None
        slots = dict(plan.slots)
        template = sequence[i]
        if outlier in ("value", "category"):
            template = outlier_family(str(outlier), sequence[i - 1], plan.families, pool, rng)
        if outlier == "category" and plan.category_slot:
            slot = plan.category_slot
            slots[slot] = other_value(kind, slot, plan.slots[slot], ctx, rng)
        values = entry_values(kind, plan.bases, ctx.currency, rng, factor)
        fields = field_objects(kind, values, slots, ctx.profile, ctx.currency)
        add_special_fields(kind, fields, plan, i, versions, factor, rng)
        text = render(template, fields, rng)
        if outlier == "content":
            text = attach_note(text, rng.choice(ctx.book.notes[kind.key]), rng)
        written.append((text, values))
    return written


def entry_times(
    kind: K.Kind, days: list[date], rng: random.Random, clocks: list[float]
) -> list[datetime]:
    """Timestamps: a routine-specific usual time of day with small jitter.

    Kinds that report a time of day (a pickup at 3:25) are stamped a little after it.
    """
    centre = rng.uniform(*kind.hours) * 60
    stamps = []
    for i, day in enumerate(days):
        minute = centre + rng.uniform(-kind.jitter_min, kind.jitter_min)
        if kind.stamp_after:
            minute = clocks[i] + rng.uniform(4, 25)
        stamps.append(at_minute(day, minute))
    return stamps


def question_time(last: datetime, rng: random.Random) -> datetime:
    """About a day after the last entry (0.55-1.85 days), at a waking hour."""
    asked = last + timedelta(days=1)
    for _ in range(50):
        asked = last + timedelta(days=rng.uniform(0.55, 1.85))
        if 8 <= asked.hour < 22:
            break
    return asked.replace(second=0, microsecond=0)


def build_routine(
    kind: K.Kind, ctx: RoutineContext, outlier_kind: str | None, stopped: bool, variant: str
) -> Routine:
    """Plan, word and date one routine; stopped routines end several intervals early."""
    tag = (ctx.seed, ctx.book.split, ctx.persona_id, kind.key)
    plan = plan_routine(kind, ctx, outlier_kind, rng_for(*tag, "plan"))
    written = write_entries(kind, ctx, plan, rng_for(*tag, "text"))
    clocks = [values.get(kind.stamp_after, 0.0) for _, values in written]
    gaps_rng = rng_for(*tag, "gaps")
    gaps = [gaps_rng.choice((2, 3)) for _ in range(plan.n + 2)]
    last = due_last_day(kind, ctx.anchor, plan.offset)
    days = series_days(kind, last, plan.n, plan.skip_after, gaps)
    stamps = entry_times(kind, days, rng_for(*tag, "time"), clocks)
    asked = question_time(stamps[-1], rng_for(*tag, "ask"))
    missed = 0
    if stopped and variant == "absence":
        missed = plan.stop_k
        end = last
        for _ in range(missed):
            end = step_back(end, kind.cadence, gaps_rng.choice((2, 3)))
        days = series_days(kind, end, plan.n, plan.skip_after, gaps)
        stamps = entry_times(kind, days, rng_for(*tag, "time"), clocks)
    entries = [
        Entry(text, when, outlier_kind if i == plan.outlier_at else None)
        for i, ((text, _), when) in enumerate(zip(written, stamps, strict=True))
    ]
    status = "outlier" if outlier_kind else ("stopped" if missed else "normal")
    return Routine(
        kind,
        f"{ctx.persona_id}-{kind.key}",
        status,
        outlier_kind,
        plan.skip_after is not None,
        entries,
        plan.question,
        asked,
        missed,
    )


# ---------------------------------------------------------------------------- personas


def misc_memories(ctx: RoutineContext, rng: random.Random) -> list[tuple[str, datetime]]:
    """About thirty unrelated memories spread over the persona's year."""
    wanted = rng.randint(28, 32)
    templates = list(ctx.book.misc)
    texts: list[str] = []
    attempts = 0
    while len(texts) < wanted and attempts < 50 * wanted:
        attempts += 1
        if not templates:
            templates = list(ctx.book.misc)
        template = templates.pop(rng.randrange(len(templates)))
        text = " ".join(expand_choices(template, rng).split())
        if text not in texts:
            texts.append(text)
    start = ctx.anchor - timedelta(days=340)
    span_minutes = 350 * 24 * 60
    stamps = []
    for _ in texts:
        moment = datetime.combine(start, time()) + timedelta(minutes=rng.randrange(span_minutes))
        stamps.append(moment.replace(hour=rng.randint(7, 22)))
    return list(zip(texts, stamps, strict=True))


def build_persona(
    index: int,
    profile: K.Profile,
    kinds: list[K.Kind],
    pattern: tuple[str, ...],
    book: Phrasebook,
    seed: int,
    variant: str,
    load: Counter[tuple[str, str]],
) -> Persona:
    persona_id = f"{book.split}-p{index:02d}"
    rng = rng_for(seed, book.split, persona_id, "persona")
    offset = (index % ANCHOR_CYCLE) * PERSONA_SPACING_DAYS + rng.randint(0, 3)
    anchor = FIRST_ANCHOR + timedelta(days=offset)
    currency = K.CURRENCIES[profile.currency]
    ctx = RoutineContext(persona_id, profile, currency, book, seed, anchor, {profile.name})
    outliers = assign_outliers(kinds, pattern, rng, load)
    stopped = choose_stopped([k.key for k in kinds if k.key not in outliers], rng, load)
    routines = [
        build_routine(kind, ctx, outliers.get(kind.key), kind.key in stopped, variant)
        for kind in kinds
    ]
    misc = misc_memories(ctx, rng_for(seed, book.split, persona_id, "misc"))
    return Persona(persona_id, profile, currency, routines, misc)


def pick_profiles(rng: random.Random) -> list[K.Profile]:
    """All profiles in an order that visits every currency before repeating one."""
    groups: dict[str, list[K.Profile]] = {}
    for profile in K.PROFILES:
        groups.setdefault(profile.currency, []).append(profile)
    for members in groups.values():
        rng.shuffle(members)
    keys = sorted(groups)
    rng.shuffle(keys)
    ordered: list[K.Profile] = []
    while any(groups.values()):
        ordered.extend(groups[key].pop() for key in keys if groups[key])
    return ordered


def build_personas(split: str, variant: str, seed: int, n_personas: int) -> list[Persona]:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {tuple(VARIANTS)}")
    book = load(split)
    rng = rng_for(seed, split, "dataset")
    profiles = pick_profiles(rng)
    kind_plans = plan_kinds(n_personas, rng, K.kinds_for(split))
    patterns = plan_outliers(n_personas, rng)
    planted: Counter[tuple[str, str]] = Counter()
    return [
        build_persona(
            i, profiles[i % len(profiles)], kind_plans[i], patterns[i], book, seed, variant, planted
        )
        for i in range(n_personas)
    ]


# ---------------------------------------------------------------------------- JSON


def routine_record(routine: Routine) -> dict[str, object]:
    return {
        "routine_id": routine.routine_id,
        "routine_key": routine.kind.key,
        "label": routine.kind.label,
        "status": routine.status,
        "outlier_kind": routine.outlier_kind,
        "n_entries": len(routine.entries),
        "mid_series_skip": routine.skip,
    }


def persona_record(persona: Persona) -> dict[str, object]:
    return {
        "persona": persona.persona_id,
        "name": persona.profile.name,
        "currency": persona.currency.symbol.strip(),
        "currency_code": persona.currency.code,
        "country": persona.profile.country,
        "routines": [routine_record(r) for r in persona.routines],
    }


def memory_records(persona: Persona) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for routine in persona.routines:
        for i, entry in enumerate(routine.entries):
            records.append(
                {
                    "memory_id": f"{routine.routine_id}-{i:02d}",
                    "persona": persona.persona_id,
                    "text": entry.text,
                    "created_at": iso(entry.when),
                    "routine_id": routine.routine_id,
                    "routine_key": routine.kind.key,
                    "is_outlier": entry.outlier_kind is not None,
                    "outlier_kind": entry.outlier_kind,
                }
            )
    order = list(range(len(persona.misc)))
    rng_for(persona.persona_id, "misc-ids").shuffle(order)
    for number, (text, when) in zip(order, persona.misc, strict=True):
        records.append(
            {
                "memory_id": f"{persona.persona_id}-misc-{number:02d}",
                "persona": persona.persona_id,
                "text": text,
                "created_at": iso(when),
                "routine_id": None,
                "routine_key": None,
                "is_outlier": False,
                "outlier_kind": None,
            }
        )
    records.sort(key=lambda r: (str(r["created_at"]), str(r["memory_id"])))
    return records


def question_record(persona: Persona, routine: Routine) -> dict[str, object]:
    last = routine.entries[-1].when
    outlier_ids = [
        f"{routine.routine_id}-{i:02d}" for i, e in enumerate(routine.entries) if e.outlier_kind
    ]
    if routine.status == "outlier":
        expected: str | None = outlier_ids[0]
        expected_kind: str | None = routine.outlier_kind
    elif routine.status == "stopped":
        expected, expected_kind = "stopped", "stopped"
    else:
        expected, expected_kind = None, None
    return {
        "question_id": f"{routine.routine_id}-q",
        "persona": persona.persona_id,
        "text": routine.question,
        "asked_at": iso(routine.asked_at),
        "routine_id": routine.routine_id,
        "routine_key": routine.kind.key,
        "expected": expected,
        "expected_kind": expected_kind,
        "routine_status": routine.status,
        "days_since_last_entry": round((routine.asked_at - last).total_seconds() / 86400, 2),
        "missed_intervals": routine.missed,
        "usual_interval_days": routine.kind.interval_days,
    }


def overlap_share(personas: list[Persona]) -> float:
    """Share of questions that share at least one content word with their routine's entries."""
    routines = [r for p in personas for r in p.routines]
    hits = sum(shares_content_word(r.question, (e.text for e in r.entries)) for r in routines)
    return round(hits / len(routines), 3) if routines else 0.0


def expected_counts(questions: list[dict[str, object]]) -> dict[str, int]:
    counts = {"value": 0, "category": 0, "content": 0, "stopped": 0, "none": 0}
    for question in questions:
        counts[str(question["expected_kind"] or "none")] += 1
    return counts


def build_dataset(
    split: str, variant: str, seed: int = DEFAULT_SEED, n_personas: int = 12
) -> dict[str, object]:
    """The whole dataset as a JSON-ready dict in the dev files' layout."""
    personas = build_personas(split, variant, seed, n_personas)
    memories = [m for p in personas for m in memory_records(p)]
    questions = []
    for persona in personas:
        asked = [question_record(persona, r) for r in persona.routines]
        questions.extend(sorted(asked, key=lambda q: (str(q["asked_at"]), str(q["question_id"]))))
    meta = {
        "split": split,
        "variant": VARIANTS[variant],
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
        "template_set": split,
        "n_personas": len(personas),
        "n_memories": len(memories),
        "n_questions": len(questions),
        "n_kinds": len({r.kind.key for p in personas for r in p.routines}),
        "expected_counts": expected_counts(questions),
        "question_entry_word_overlap_share": overlap_share(personas),
        "note": NOTE,
    }
    return {
        "meta": meta,
        "personas": [persona_record(p) for p in personas],
        "memories": memories,
        "questions": questions,
    }
