"""Rendering the PAE slots into the prompt text an agent pastes into its context."""

from __future__ import annotations

from itertools import groupby

from pcm_common.text import brief, one_line
from pcm_recall.schemas import AnomalyFlag, ContextItem

FLAGS = "[ANOMALY FLAGS — PAY ATTENTION]"
ASKER = "[ASKER CONTEXT]"
SITUATIONAL = "[SITUATIONAL CONTEXT]"
EMPTY = "No relevant memories found"


# A flagged memory that the context below quotes in full is named by its opening words
# only (on LoCoMo, k=50, flags took ~430 of ~2,700 prompt tokens, mostly repeated memories).
BRIEF_CHARS = 80


def item_line(item: ContextItem) -> str:
    """A memory's line; an outdated one says so (the agent sees what changed and when)."""
    return f"- {'(superseded) ' if item.state == 'superseded' else ''}{one_line(item.text)}"


def flag_line(flag: AnomalyFlag, quoted: bool = False) -> str:
    line = f"- {brief(flag.text, BRIEF_CHARS) if quoted else one_line(flag.text)}"
    if flag.differs:
        line += f" — {one_line(flag.differs)}"
    if flag.usual:
        line += f" (usual: {one_line(flag.usual)})"
    return line


def render(
    flags: list[AnomalyFlag],
    asker: list[ContextItem],
    situational: list[ContextItem],
    episode: list[ContextItem],
    budget_chars: int,
) -> str:
    head = [ASKER, *([f"- {one_line(a.text)}" for a in asker] or ["- none"]), SITUATIONAL]
    full = [FLAGS, *([flag_line(f) for f in flags] or ["- none"]), *head]
    if not situational:
        return "\n".join([*full, EMPTY])
    # The flags' cost is not known before the context is chosen (a flag quoting a chosen
    # memory is brief): budget them at full length, which can only leave room unused.
    used = sum(len(x) + 1 for x in full)
    # Best situational items first, then episode neighbours, until the budget is spent;
    # a day's date costs its own line once (cheaper than a date on every memory).
    chosen: list[ContextItem] = []
    days: set[str] = set()
    for item in [*situational, *episode]:
        day = f"{item.created_at:%Y-%m-%d}"
        cost = len(item_line(item)) + 1 + (0 if day in days else len(day) + 2)
        if used + cost > budget_chars and chosen:
            break
        chosen.append(item)
        days.add(day)
        used += cost
    quoted = {i.memory_id for i in chosen}
    lines = [FLAGS, *([flag_line(f, f.memory_id in quoted) for f in flags] or ["- none"])]
    lines += head
    chosen.sort(key=lambda i: (i.created_at, i.seq))
    for day, items in groupby(chosen, key=lambda i: f"{i.created_at:%Y-%m-%d}"):
        lines.append(f"{day}:")
        lines += [item_line(i) for i in items]
    return "\n".join(lines)
