"""Self-check for generated files and for the phrasebooks themselves."""

from __future__ import annotations

import json
import re
import string
from collections import Counter, defaultdict
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from . import kinds as K
from .phrasings import ISOLATED, SPLITS, load
from .quantities import (
    Clock,
    Count,
    Duration,
    Measure,
    Money,
    Reading,
    Serial,
    Text,
    Version,
)
from .textstats import content_words, quoted_trigrams

_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
OUTLIER_KINDS = ("value", "category", "content")

Record = dict[str, Any]


def parse_time(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------- phrasebooks


def template_fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def sample_fields(kind: K.Kind, profile: K.Profile) -> dict[str, object]:
    """One value of every placeholder, for checking that a template renders."""
    cur = K.CURRENCIES[profile.currency]
    fields: dict[str, object] = {name: Text(pool[0]) for name, pool in kind.slots.items()}
    for q in kind.quantities:
        if q.form == "money":
            fields[q.name] = Money(1234.5, cur, cur.decimals)
        elif q.form == "duration":
            fields[q.name] = Duration(83.0)
        elif q.form == "measure":
            fields[q.name] = Measure(
                7.25,
                K.unit_for(q.unit, profile.units),
                K.UNITS.get(q.unit + "_alt", {}).get(profile.units),
            )
        elif q.form == "count":
            fields[q.name] = Count(3, *q.noun)
        elif q.form == "reading":
            fields[q.name] = Reading(128, 82)
        elif q.form == "clock":
            fields[q.name] = Clock(15 * 60 + 25)
        elif q.form == "version":
            fields[q.name] = Version(2, 14, 3)
        elif q.form == "serial":
            fields[q.name] = Serial("INV", 142)
    return fields


def check_family(kind: K.Kind, template: str) -> list[str]:
    problems = []
    used = template_fields(template)
    unknown = used - kind.placeholders()
    if unknown:
        problems.append(f"{kind.key}: unknown fields {sorted(unknown)} in {template!r}")
    missing = set(kind.category_slots) - used
    if not kind.main_fields() & used:
        missing.add(kind.main)
    if missing:
        problems.append(f"{kind.key}: {template!r} lacks {sorted(missing)}")
    for profile in K.PROFILES:
        try:
            template.format(**sample_fields(kind, profile))
        except (KeyError, ValueError, IndexError) as error:
            problems.append(f"{kind.key}: {template!r} fails to render: {error}")
            break
    return problems


def check_phrasebooks() -> tuple[list[str], dict[str, dict[str, int]]]:
    """Problems in the phrasebooks and the number of families per kind per split."""
    problems: list[str] = []
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    seen: dict[str, str] = {}
    for split in SPLITS:
        book = load(split)
        for kind in K.kinds_for(split):
            families = book.families.get(kind.key, ())
            counts[kind.key][split] = len(families)
            if not book.questions.get(kind.key) or not book.notes.get(kind.key):
                problems.append(f"{split}: {kind.key} lacks questions or content notes")
            for template in families:
                problems.extend(check_family(kind, template))
            strings = [*families, *book.questions.get(kind.key, ()), *book.notes.get(kind.key, ())]
            for text in strings:
                if seen.setdefault(text, split) != split:
                    problems.append(f"{kind.key}: {text!r} appears in {seen[text]} and {split}")
        for text in book.misc:
            if seen.setdefault(text, split) != split:
                problems.append(f"misc {text!r} appears in {seen[text]} and {split}")
    problems.extend(check_isolation())
    return problems, dict(counts)


def split_strings(split: str) -> list[str]:
    """Every string of a split, and each stretch of fixed text of 16 characters or more."""
    book = load(split)
    strings: list[str] = list(book.misc)
    for table in (book.families, book.questions, book.notes):
        for items in table.values():
            strings.extend(items)
    pieces = []
    for text in strings:
        pieces.append(text)
        for literal, _, _, _ in string.Formatter().parse(text):
            pieces.extend(
                part.strip() for part in re.split(r"[\[\]|]", literal) if len(part.strip()) >= 16
            )
    return pieces


def heldout_strings() -> list[str]:
    """Every heldout string, and each stretch of fixed text of 16 characters or more."""
    return split_strings("heldout")


def check_split_isolation(split: str) -> list[str]:
    """One isolated split's wording may live only in phrasings_<split>.py (and in data)."""
    here = Path(__file__).parent
    own = f"phrasings_{split}.py"
    others = [p for p in here.glob("*.py") if p.name != own]
    others += [p for p in here.glob("*.md")]
    texts = {p.name: p.read_text(encoding="utf-8") for p in others}
    problems = []
    for piece in set(split_strings(split)):
        for name, text in texts.items():
            if piece in text:
                problems.append(f"{split} wording {piece!r} found in {name}")
    return problems


def check_heldout_isolation() -> list[str]:
    """Heldout wording may live only in phrasings_heldout.py (and in generated data)."""
    return check_split_isolation("heldout")


def check_isolation() -> list[str]:
    """Every isolated split (heldout, valid, blind, blind2, blind3, blind4, blind5) keeps its
    wording to its own module."""
    problems: list[str] = []
    for split in ISOLATED:
        problems.extend(check_split_isolation(split))
    return problems


# ---------------------------------------------------------------------------- datasets


def check_ids(data: Record) -> list[str]:
    problems = []
    memory_ids = [m["memory_id"] for m in data["memories"]]
    question_ids = [q["question_id"] for q in data["questions"]]
    routine_ids = [r["routine_id"] for p in data["personas"] for r in p["routines"]]
    for label, ids in (
        ("memory", memory_ids),
        ("question", question_ids),
        ("routine", routine_ids),
    ):
        dupes = [i for i, n in Counter(ids).items() if n > 1]
        if dupes:
            problems.append(f"duplicate {label} ids: {dupes[:5]}")
    for memory in data["memories"]:
        key = memory["routine_key"] or "misc"
        if not re.fullmatch(rf"{re.escape(memory['persona'])}-{key}-\d\d", memory["memory_id"]):
            problems.append(f"bad memory id {memory['memory_id']}")
        if not _ISO.match(memory["created_at"]):
            problems.append(f"bad created_at {memory['created_at']}")
    return problems


def check_order(data: Record) -> list[str]:
    problems = []
    for field, rows in (("created_at", data["memories"]), ("asked_at", data["questions"])):
        by_persona: dict[str, list[str]] = defaultdict(list)
        for row in rows:
            by_persona[row["persona"]].append(row[field])
        for persona, stamps in by_persona.items():
            if stamps != sorted(stamps):
                problems.append(f"{persona}: {field} out of time order")
    return problems


def check_routine(
    routine: Record, entries: list[Record], question: Record | None, variant: str
) -> list[str]:
    """One routine: length, its outlier, its question and its timing."""
    rid = routine["routine_id"]
    problems = []
    if question is None:
        return [f"{rid}: no question"]
    if len(entries) != routine["n_entries"] or not 8 <= len(entries) <= 12:
        problems.append(f"{rid}: {len(entries)} entries, n_entries {routine['n_entries']}")
    expected_ids = [f"{rid}-{i:02d}" for i in range(len(entries))]
    if [e["memory_id"] for e in entries] != expected_ids:
        problems.append(f"{rid}: entry ids not numbered in time order")
    outliers = [i for i, e in enumerate(entries) if e["is_outlier"]]
    status = routine["status"]
    if status == "outlier":
        if len(outliers) != 1:
            problems.append(f"{rid}: {len(outliers)} outliers")
        elif outliers[0] < len(entries) - 4:
            problems.append(f"{rid}: outlier not among the last four entries")
        elif entries[outliers[0]]["outlier_kind"] != routine["outlier_kind"]:
            problems.append(f"{rid}: outlier kind mismatch")
        elif question["expected"] != entries[outliers[0]]["memory_id"]:
            problems.append(f"{rid}: question expects {question['expected']}")
    elif outliers:
        problems.append(f"{rid}: {status} routine has an outlier")
    if status == "stopped" and (variant != "outliers_absence" or question["expected"] != "stopped"):
        problems.append(f"{rid}: stopped routine mislabelled")
    if status == "normal" and question["expected"] is not None:
        problems.append(f"{rid}: normal routine expects {question['expected']}")
    problems.extend(check_question_timing(routine, entries, question))
    problems.extend(check_question_wording(routine["routine_key"], rid, entries, question))
    return problems


def check_question_timing(routine: Record, entries: list[Record], question: Record) -> list[str]:
    rid = routine["routine_id"]
    last = parse_time(entries[-1]["created_at"])
    asked = parse_time(question["asked_at"])
    days = (asked - last).total_seconds() / 86400
    problems = []
    if abs(days - question["days_since_last_entry"]) > 0.01:
        problems.append(f"{rid}: days_since_last_entry {question['days_since_last_entry']}")
    interval = K.KIND_BY_KEY[routine["routine_key"]].interval_days
    if question["usual_interval_days"] != interval:
        problems.append(f"{rid}: usual_interval_days {question['usual_interval_days']}")
    if routine["status"] == "stopped":
        missed = question["missed_intervals"]
        if missed < 3 or days < missed * min(interval, 2.0) * 0.9:
            problems.append(f"{rid}: stopped only {days:.1f} days ({missed} intervals)")
    elif not 0.4 <= days <= 2.0 or question["missed_intervals"] != 0:
        problems.append(f"{rid}: question {days:.2f} days after the last entry")
    return problems


@cache
def kind_vocabulary(key: str) -> frozenset[str]:
    """Words of a kind's label and of the fixed text of its families in every split."""
    vocabulary = content_words(K.KIND_BY_KEY[key].label)
    for split in SPLITS:
        for template in load(split).families.get(key, ()):
            literal = "".join(text for text, _, _, _ in string.Formatter().parse(template))
            vocabulary |= content_words(literal)
    return frozenset(vocabulary)


def check_question_wording(
    key: str, rid: str, entries: list[Record], question: Record
) -> list[str]:
    """The question must not quote the entries, nor use a word that only the outlier has
    (the routine's own topic words, such as "rent" or "school", are allowed)."""
    texts = [e["text"] for e in entries]
    problems = []
    shared = quoted_trigrams(question["text"], texts)
    if shared:
        problems.append(f"{rid}: question quotes entries {sorted(shared)[:2]}")
    for entry in entries:
        if entry["is_outlier"]:
            others = set(kind_vocabulary(key))
            for other in entries:
                if other is not entry:
                    others |= content_words(other["text"])
            only = (content_words(entry["text"]) - others) & content_words(question["text"])
            if only:
                problems.append(f"{rid}: question mentions the outlier ({sorted(only)})")
    return problems


def check_counts(data: Record) -> list[str]:
    meta = data["meta"]
    problems = []
    counts = Counter(q["expected_kind"] or "none" for q in data["questions"])
    for key, value in meta["expected_counts"].items():
        if counts.get(key, 0) != value:
            problems.append(f"expected_counts[{key}] = {value}, questions say {counts.get(key, 0)}")
    for key, rows in (
        ("n_memories", "memories"),
        ("n_questions", "questions"),
        ("n_personas", "personas"),
    ):
        if meta[key] != len(data[rows]):
            problems.append(f"meta {key} = {meta[key]}, file has {len(data[rows])}")
    stopped_wanted = 2 if meta["variant"] == "outliers_absence" else 0
    for persona in data["personas"]:
        statuses = Counter(r["status"] for r in persona["routines"])
        if len(persona["routines"]) != 8 or statuses["outlier"] != 4:
            problems.append(f"{persona['persona']}: routines {dict(statuses)}")
        if statuses["stopped"] != stopped_wanted:
            problems.append(f"{persona['persona']}: {statuses['stopped']} stopped routines")
    return problems


def check_misc(data: Record) -> list[str]:
    problems = []
    per_persona = Counter(m["persona"] for m in data["memories"] if m["routine_id"] is None)
    for persona in data["personas"]:
        n = per_persona[persona["persona"]]
        if not 25 <= n <= 35:
            problems.append(f"{persona['persona']}: {n} misc memories")
    for memory in data["memories"]:
        if memory["routine_id"] is None and (memory["is_outlier"] or memory["outlier_kind"]):
            problems.append(f"{memory['memory_id']}: misc memory marked as outlier")
    return problems


def check_dataset(data: Record) -> list[str]:
    """Every problem found in one generated dataset; an empty list means it passed."""
    problems = check_ids(data) + check_order(data) + check_counts(data) + check_misc(data)
    entries: dict[str, list[Record]] = defaultdict(list)
    for memory in data["memories"]:
        if memory["routine_id"]:
            entries[memory["routine_id"]].append(memory)
    questions = {q["routine_id"]: q for q in data["questions"]}
    for persona in data["personas"]:
        for routine in persona["routines"]:
            rows = sorted(entries[routine["routine_id"]], key=lambda m: m["created_at"])
            problems.extend(
                check_routine(
                    routine, rows, questions.get(routine["routine_id"]), data["meta"]["variant"]
                )
            )
    return problems


def kind_table(data: Record) -> str:
    """Routines, outliers by kind and stopped routines per routine kind."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for persona in data["personas"]:
        for routine in persona["routines"]:
            row = rows[routine["routine_key"]]
            row["routines"] += 1
            row["entries"] += routine["n_entries"]
            row[routine["outlier_kind"] or routine["status"]] += 1
    columns = ("routines", "entries", *OUTLIER_KINDS, "stopped", "normal")
    lines = [f"{'kind':<18}" + "".join(f"{c:>10}" for c in columns)]
    for key in sorted(rows):
        lines.append(f"{key:<18}" + "".join(f"{rows[key][c]:>10}" for c in columns))
    total = sum(rows.values(), Counter())
    lines.append(f"{'total':<18}" + "".join(f"{total[c]:>10}" for c in columns))
    return "\n".join(lines)


def check_path(path: Path) -> bool:
    """Check one file, print its counts per kind and its problems; True when it passed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    problems = check_dataset(data)
    meta = data["meta"]
    print(f"== {path}  split={meta['split']} variant={meta['variant']} seed={meta['seed']}")
    print(
        f"   personas {meta['n_personas']}, memories {meta['n_memories']}, "
        f"questions {meta['n_questions']}, expected {meta['expected_counts']}"
    )
    print(kind_table(data))
    for problem in problems[:40]:
        print("   PROBLEM", problem)
    print(f"   {'OK' if not problems else f'{len(problems)} problems'}")
    return not problems
